import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { retentionWorkflow } from '../workflows/maintenance/retention.workflow.ts';

export const RETENTION_SCHEDULE_ID = 'maintenance/retention';

/**
 * Creates the hourly retention schedule unless it exists. Every worker calls this at start, so several
 * starting at once race: the server keeps the first and answers the others ScheduleAlreadyRunning, which is
 * success here. An existing schedule is left as it is (an operator may have paused or retimed it).
 */
export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string; scheduleId?: string }): Promise<void> {
  const scheduleId = options.scheduleId ?? RETENTION_SCHEDULE_ID;
  try {
    // Typed by the workflow, so its arguments are checked; named by string, since workflow code runs only in the worker's sandbox.
    await client.schedule.create<typeof retentionWorkflow>({
      scheduleId,
      spec: { intervals: [{ every: '1 hour' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'retentionWorkflow',
        args: [],
        taskQueue: options.taskQueue,
        // The schedule appends the nominal start time, so each run has its own searchable id.
        workflowId: scheduleId,
        workflowExecutionTimeout: '1 hour',
      },
      policies: {
        // A run still purging when the next is due makes that one pointless; after an outage one catch-up run is enough.
        overlap: ScheduleOverlapPolicy.SKIP,
        catchupWindow: '1 hour',
      },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}
