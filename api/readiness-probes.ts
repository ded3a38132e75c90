import type { MikroORM } from '@mikro-orm/postgresql';
import type { Connection } from '@temporalio/client';
import { pingDatabase } from '../data/queries/health.ts';
import type { ReadinessProbes } from './rest/health.routes.ts';

/** A poller seen this recently counts as a live worker (Temporal keeps pollers for about a minute). */
const POLLER_FRESH_MS = 70_000;

export function createReadinessProbes(deps: { orm: MikroORM; temporal: Connection; namespace: string; taskQueue: string }): ReadinessProbes {
  return {
    async postgres() {
      await pingDatabase(deps.orm.em.fork());
    },
    async temporal() {
      await deps.temporal.workflowService.getSystemInfo({});
    },
    async workerPolling() {
      const description = await deps.temporal.workflowService.describeTaskQueue({
        namespace: deps.namespace,
        taskQueue: { name: deps.taskQueue },
        taskQueueType: 1, // workflow task queue
      });
      const now = Date.now();
      const fresh = (description.pollers ?? []).some((poller) => {
        const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
        return now - seconds * 1000 < POLLER_FRESH_MS;
      });
      if (!fresh) throw new Error(`no worker polling task queue ${deps.taskQueue}`);
    },
  };
}
