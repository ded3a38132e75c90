import { inject, expect, it } from 'vitest';
import { openOrm } from '../data/orm.ts';

it('the committed migrations create exactly the schema the entities describe', async () => {
  const orm = await openOrm({ databaseUrl: inject('databaseUrl'), poolSize: 1 });
  try {
    const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true, schema: 'public' });
    expect(diff.trim()).toBe('');
  } finally {
    await orm.close();
  }
});
