/**
 * `npm run credentials`: prints the development credentials `npm start` keeps under DATA_DIR (operator
 * token, the demo tenant's keys and secrets, the data-encryption key); `-- --json` prints them as JSON.
 * Development only: in production every secret comes from the environment. It only reads: a DATA_DIR no start has
 * used is told so, never given new secrets (they would not be the ones a running gateway checks). A secret set in the
 * environment is named, not printed, as `npm start` names it.
 */
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { describeCredentials, readDevCredentials, storedEncryptionKey } from './local-stack/dev-credentials.ts';

const config = configOrExit(() => loadConfig());
if (config.nodeEnv === 'production') {
  process.stderr.write('NODE_ENV=production: there are no development credentials; the secrets are in the environment.\n');
  process.exit(1);
}
const stored = readDevCredentials(config.dataDir);
const storedKey = storedEncryptionKey(config.dataDir);
if (!stored.operatorToken && !stored.demo && storedKey === undefined) {
  process.stderr.write(`No development credentials under DATA_DIR ${config.dataDir}: run \`npm start\` with this DATA_DIR first.\n`);
  process.exit(1);
}
const credentials = {
  operatorToken: config.operatorToken ? undefined : stored.operatorToken,
  dataEncryptionKey: config.dataEncryptionKey ? undefined : storedKey,
  demo: stored.demo,
};
process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(credentials, null, 2)}\n` : `${describeCredentials(credentials).join('\n')}\n`);
