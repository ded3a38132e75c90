import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Heartbeats every activity scheduled with a heartbeat timeout, for as long as it runs, so that Temporal learns of a
 * worker that died (killed, its machine gone) within that timeout and gives the activity to another worker, rather
 * than when its start-to-close limit ends (minutes for an outside call or an e-mail batch). The activities themselves
 * stay free of Temporal: whoever schedules one decides, with its `heartbeatTimeout`, how soon its loss is noticed.
 * An activity shorter than a beat sends none; local activities cannot heartbeat and run inside their workflow task.
 */
export const activityHeartbeats: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    async execute(input, next) {
      const timeoutMs = context.info.heartbeatTimeoutMs;
      if (context.info.isLocal || !timeoutMs) return next(input);
      // Four beats per timeout: one delayed or lost (the SDK also throttles them) still leaves the timeout unreached.
      const beat = setInterval(() => context.heartbeat(), Math.max(timeoutMs / 4, 250));
      try {
        return await next(input);
      } finally {
        clearInterval(beat);
      }
    },
  },
});
