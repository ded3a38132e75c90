/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded PostgreSQL). */
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { ensureLocalServers } from './local-stack/local-runtime.ts';
import { migrate, openOrm } from '../data/orm.ts';

const config = configOrExit(() => loadConfig());
const servers = await ensureLocalServers(config, { temporal: false });
// A failed migration still stops the embedded PostgreSQL it started (nothing else would: see embedded-postgres.ts).
try {
  const orm = await openOrm({ databaseUrl: servers.databaseUrl });
  try {
    const applied = await migrate(orm);
    process.stdout.write(applied.length > 0 ? `Applied: ${applied.join(', ')}\n` : 'Nothing to apply\n');
  } finally {
    await orm.close();
  }
} finally {
  await servers.stop();
}
