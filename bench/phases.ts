import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';

const EventType = proto.temporal.api.enums.v1.EventType;

/** What each history event of a submit means, in the words of the payment process. */
const PHASES: Partial<Record<number, string>> = {
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED]: 'workflow started (the start reached the server)',
  [EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]: 'workflow task scheduled',
  [EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED]: 'workflow task picked up by a worker (eager start: the gateway\'s, in the start itself)',
  [EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]: 'workflow task completed',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED]: 'submit update accepted',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED]: 'submit update completed (the answer)',
  [EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]: 'activity scheduled',
  [EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED]: 'activity completed',
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED]: 'workflow completed (background phase done)',
};

/** A marker is a local activity's record or a patch's (written once by a new workflow, read on replay). */
function markerPhase(marker: proto.temporal.api.history.v1.IMarkerRecordedEventAttributes | null | undefined): string {
  const name = marker?.markerName;
  const payload = (key: string) => {
    const data = marker?.details?.[key]?.payloads?.[0]?.data;
    return data ? (JSON.parse(Buffer.from(data).toString()) as Record<string, unknown>) : undefined;
  };
  if (name === 'core_local_activity') return `local activity recorded (${String(payload('data')?.activity_type ?? 'unknown')})`;
  if (name === 'core_patch') return `patch marker (${String(payload('patch-data')?.id ?? 'unknown')})`;
  return `marker recorded (${name ?? 'unnamed'})`;
}

const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;

/**
 * Where the time of one submit goes, from its workflow history: each event's offset from the workflow's start.
 * With the client's own figure (request sent to answer received) beside it, the gap before the first event is the
 * gateway's checks plus the start trip. Started eagerly, the answer leaves the gateway right after the settle step,
 * before the workflow task completes (its markers are all written then), so the client's figure can end first;
 * with Update-With-Start (GATEWAY_WORKER=off) the gap after the update completes is the answer's way back.
 */
export async function phaseBreakdown(options: { temporalAddress: string; namespace: string; workflowId: string; clientMs: number }): Promise<string[]> {
  const connection = await Connection.connect({ address: options.temporalAddress });
  try {
    const client = new Client({ connection, namespace: options.namespace });
    const history = await client.workflow.getHandle(options.workflowId).fetchHistory();
    const events = history.events ?? [];
    const start = millis(events[0]?.eventTime);
    const lines = [`| event | ms after start |`, '| --- | --- |'];
    for (const event of events) {
      const phase = event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED ? markerPhase(event.markerRecordedEventAttributes) : PHASES[event.eventType ?? 0];
      if (phase) lines.push(`| ${phase} | ${(millis(event.eventTime) - start).toFixed(1)} |`);
    }
    lines.push(`| the client's whole request (gateway checks + start + answer) | ${options.clientMs.toFixed(1)} total |`);
    return lines;
  } finally {
    await connection.close();
  }
}
