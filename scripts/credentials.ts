/**
 * `npm run credentials`: prints the development credentials `npm start` keeps under DATA_DIR (operator
 * token, the demo tenant's keys and secrets, the data-encryption key); `-- --json` prints them as JSON.
 * Development only: in production every secret comes from the environment.
 */
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { describeCredentials, developmentEncryptionKey, developmentOperatorToken, isProductionMode, readDevCredentials } from './local-stack/dev-credentials.ts';

if (isProductionMode()) {
  process.stderr.write('NODE_ENV=production: there are no development credentials; the secrets are in the environment.\n');
  process.exit(1);
}
const config = configOrExit(() => loadConfig());
const credentials = {
  operatorToken: config.operatorToken ?? developmentOperatorToken(config.dataDir),
  dataEncryptionKey: config.dataEncryptionKey?.toString('base64') ?? developmentEncryptionKey(config.dataDir),
  demo: readDevCredentials(config.dataDir).demo,
};
process.stdout.write(process.argv.includes('--json') ? `${JSON.stringify(credentials, null, 2)}\n` : `${describeCredentials(credentials).join('\n')}\n`);
