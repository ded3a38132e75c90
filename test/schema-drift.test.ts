import { inject, expect, it } from 'vitest';
import { openOrm } from '../data/orm.ts';
import { REFUSAL_TRIGGER_PREFIX } from './support/refusals.ts';

it('the committed migrations create exactly the schema the entities describe', async () => {
  const orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 1 });
  try {
    const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true, schema: 'public' });
    // The triggers tests install to make PostgreSQL refuse their rows stay until the run's database goes: not schema.
    const drift = diff.split('\n').filter((line) => !line.includes(REFUSAL_TRIGGER_PREFIX));
    expect(drift.join('\n').trim()).toBe('');
  } finally {
    await orm.close();
  }
});
