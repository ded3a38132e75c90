import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { deleteExpiredRows, findLongestCardWindowSeconds, type RetentionTable } from '../../data/queries/retention.ts';
import type { Logger } from '../../domain/logger.ts';
import { PURGE_BATCH_SIZE, PURGE_MAX_BATCHES, RETENTION_SECONDS, submitAttemptRetentionSeconds } from './retention-policy.ts';

export interface RetentionActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
}

export function createRetentionActivities(deps: RetentionActivityDeps) {
  /**
   * Deletes the table's rows past their retention, batch after batch (each its own statement) until a batch
   * comes back short or the run's bound is reached; returns how many it deleted. Safe to retry: an expired row
   * stays expired.
   */
  async function purgeExpiredRows(input: { table: RetentionTable }): Promise<{ deleted: number }> {
    const em = deps.orm.em.fork() as EntityManager;
    const retentionSeconds =
      input.table === 'submit_attempts' ? submitAttemptRetentionSeconds(await findLongestCardWindowSeconds(em)) : RETENTION_SECONDS[input.table];
    let deleted = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      const count = await deleteExpiredRows(em, input.table, retentionSeconds, PURGE_BATCH_SIZE);
      deleted += count;
      if (count < PURGE_BATCH_SIZE) break;
    }
    deps.logger.info({ table: input.table, deleted }, 'expired rows purged');
    return { deleted };
  }

  return { purgeExpiredRows };
}
