/**
 * How long one activity that makes a single outside call may run: longer than the longest call the configuration
 * allows (`PROCESSOR_TIMEOUT_MS` and `WEBHOOK_TIMEOUT_MS` are at most 120 s), with room for its database writes.
 * An activity limit shorter than its call's own timeout would time out every attempt of a slow but working processor
 * or receiver (and a webhook could be sent again while its first POST was still waiting). The calls themselves stop
 * at their configured timeout, so this bound is only ever reached by a worker that stopped answering.
 * `test/unit/config.test.ts` checks it against the configuration's limits.
 */
export const OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS = 180_000;

/**
 * How soon Temporal hands an activity whose worker died (killed, its machine gone) to another worker. An activity
 * scheduled with this heartbeat timeout is heartbeated by its worker every quarter of it while it runs
 * (`worker/activity-heartbeats.ts`), so only a worker that stopped answering misses it. Without it, a killed worker's
 * outside call or e-mail batch was taken up again only once its start-to-close limit ended: 3 to 15 minutes.
 * Every ordinary activity whose limit is longer than this has it.
 */
export const WORKER_LOSS_NOTICED_AFTER = '20 seconds';
