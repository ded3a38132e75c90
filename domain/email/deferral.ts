import type { PendingEmail, StoredDeferral } from './email-record.ts';

/** Whether an e-mail went to someone before; a workflow deferral older than `delivered` said so by naming recipients. */
export const deliveredBefore = (pending: PendingEmail): boolean => pending.delivered ?? pending.recipients !== undefined;

/**
 * What is left to do for an e-mail, from both records of its earlier attempts: the workflow's (the last attempt's
 * result, lost when a worker dies before returning it) and the row's (written as the server answered, missing when
 * that write gave up). Each attempt only narrows who is left to try and adds to who had it or was refused for good,
 * so the two records are points on one chain and the later one knows everything the earlier does: the shorter list
 * of recipients left, whether either saw a delivery, and every refusal either saw.
 */
export function whatIsLeft(fromWorkflow: PendingEmail, stored: StoredDeferral): PendingEmail {
  const lists = [fromWorkflow.recipients, stored.retryRecipients ?? undefined].filter((list) => list !== undefined);
  const recipients = lists.length === 0 ? undefined : lists.reduce((shorter, list) => (list.length < shorter.length ? list : shorter));
  const undelivered = [...new Set([...(fromWorkflow.undelivered ?? []), ...stored.undeliveredRecipients])];
  return {
    id: fromWorkflow.id,
    ...(recipients !== undefined ? { recipients: [...recipients] } : {}),
    delivered: deliveredBefore(fromWorkflow) || stored.deliveredToSomeone,
    ...(undelivered.length > 0 ? { undelivered } : {}),
  };
}
