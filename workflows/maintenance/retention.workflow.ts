import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities/index.ts';
import { WORKER_LOSS_NOTICED_AFTER } from '../contract/call-timeouts.ts';

type RetentionTable = Parameters<Activities['purgeExpiredRows']>[0]['table'];

/** Every table with a retention policy: `satisfies` stops the build when the policy gains a table missing here. */
const TABLES = Object.keys({
  submit_attempts: true,
  idempotency_keys: true,
  webhook_deliveries: true,
  rate_limit_windows: true,
  email_idempotency_keys: true,
  // Added after the others: a run in flight when a table was added replays its earlier purges in the same order.
  card_security_code_keys: true,
  action_idempotency_keys: true,
} satisfies Record<RetentionTable, true>) as RetentionTable[];

const { purgeExpiredRows } = proxyActivities<Activities>({
  // A purge is a bounded number of short batches; a retry redoes only what is still expired.
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: WORKER_LOSS_NOTICED_AFTER,
  retry: { maximumAttempts: 3, initialInterval: '10 seconds', backoffCoefficient: 2 },
});

/**
 * One retention pass (run hourly by the `maintenance/retention` schedule): purges each table in turn. A table
 * whose purge fails does not keep the others from being purged; the run then fails, naming it, so the
 * schedule's history shows it.
 */
export async function retentionWorkflow(): Promise<Partial<Record<RetentionTable, number>>> {
  const deleted: Partial<Record<RetentionTable, number>> = {};
  const failed: RetentionTable[] = [];
  for (const table of TABLES) {
    try {
      deleted[table] = (await purgeExpiredRows({ table })).deleted;
    } catch {
      failed.push(table);
    }
  }
  if (failed.length > 0) throw ApplicationFailure.nonRetryable(`Purge failed for ${failed.join(', ')}`, 'RetentionPurgeFailed', deleted);
  return deleted;
}
