import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { retentionWorkflow } from '../workflows/maintenance/retention.workflow.ts';
import type { unstartedRefundsWorkflow } from '../workflows/maintenance/unstarted-refunds.workflow.ts';
import type { unstartedDeliveriesWorkflow } from '../workflows/maintenance/unstarted-deliveries.workflow.ts';

export const RETENTION_SCHEDULE_ID = 'maintenance/retention';
export const UNSTARTED_REFUNDS_SCHEDULE_ID = 'maintenance/unstarted-refunds';
export const UNSTARTED_DELIVERIES_SCHEDULE_ID = 'maintenance/unstarted-deliveries';

/**
 * Creates a maintenance schedule unless it exists. Every worker calls this at start, so several starting at once
 * race: the server keeps the first and answers the others ScheduleAlreadyRunning, which is success here. An
 * existing schedule is left as it is (an operator may have paused or retimed it).
 */
async function ensureSchedule(client: Client, create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}

/** A run still working when the next is due makes that one pointless; after an outage one catch-up run is enough. */
const MAINTENANCE_POLICIES = { overlap: ScheduleOverlapPolicy.SKIP } as const;

/** The hourly retention pass. */
export async function ensureRetentionSchedule(client: Client, options: { taskQueue: string; scheduleId?: string }): Promise<void> {
  const scheduleId = options.scheduleId ?? RETENTION_SCHEDULE_ID;
  // Typed by the workflow, so its arguments are checked; named by string, since workflow code runs only in the worker's sandbox.
  await ensureSchedule(client, () =>
    client.schedule.create<typeof retentionWorkflow>({
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
      policies: { ...MAINTENANCE_POLICIES, catchupWindow: '1 hour' },
    }),
  );
}

/**
 * A sweep every five minutes, started with the settings of the configuration the first worker started with; an
 * operator who changes them updates the schedule's action (or deletes the schedule, which the next worker start
 * creates anew). A run has until the next is due.
 */
async function ensureFiveMinuteSweep(client: Client, sweep: { scheduleId: string; workflowType: string; settings: unknown; taskQueue: string }): Promise<void> {
  await ensureSchedule(client, () =>
    client.schedule.create({
      scheduleId: sweep.scheduleId,
      spec: { intervals: [{ every: '5 minutes' }] },
      action: {
        type: 'startWorkflow',
        workflowType: sweep.workflowType,
        args: [sweep.settings],
        taskQueue: sweep.taskQueue,
        workflowId: sweep.scheduleId,
        workflowExecutionTimeout: '10 minutes',
      },
      policies: { ...MAINTENANCE_POLICIES, catchupWindow: '5 minutes' },
    }),
  );
}

/** The sweep for refunds whose workflow never started, with the refund settings. */
export async function ensureUnstartedRefundsSchedule(
  client: Client,
  options: { taskQueue: string; settings: Parameters<typeof unstartedRefundsWorkflow>[0]; scheduleId?: string },
): Promise<void> {
  await ensureFiveMinuteSweep(client, {
    scheduleId: options.scheduleId ?? UNSTARTED_REFUNDS_SCHEDULE_ID,
    workflowType: 'unstartedRefundsWorkflow',
    settings: options.settings,
    taskQueue: options.taskQueue,
  });
}

/** The sweep for webhook deliveries a gateway recorded but never started, with the delivery settings. */
export async function ensureUnstartedDeliveriesSchedule(client: Client, options: { taskQueue: string; settings: Parameters<typeof unstartedDeliveriesWorkflow>[0]; scheduleId?: string }): Promise<void> {
  await ensureFiveMinuteSweep(client, {
    scheduleId: options.scheduleId ?? UNSTARTED_DELIVERIES_SCHEDULE_ID,
    workflowType: 'unstartedDeliveriesWorkflow',
    settings: options.settings,
    taskQueue: options.taskQueue,
  });
}
