import { temporal } from '@temporalio/proto';
import type { WorkflowHandle } from '@temporalio/client';

/**
 * A workflow's history as the server keeps it (the protobuf bytes), as text to search: every payload appears in it as
 * its JSON, so a card number anywhere in an input, result, marker or failure shows. (`JSON.stringify` of the history
 * object shows payloads as byte arrays, where no value can ever be found.)
 */
export async function historyText(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  return Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
}
