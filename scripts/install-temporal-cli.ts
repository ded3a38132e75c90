/**
 * `npm run temporal:install`: makes sure a Temporal CLI is available the way `npm start` and the tests
 * find it (TEMPORAL_CLI_PATH, PATH, else installed once into .data/tools/temporal) and prints its path.
 */
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { ensureTemporalCli } from './local-stack/temporal-cli.ts';

const cli = ensureTemporalCli({ explicitPath: configOrExit(() => loadConfig()).temporalCliPath, log: (line) => process.stderr.write(`${line}\n`) });
process.stdout.write(`${cli}\n`);
