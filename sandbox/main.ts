/**
 * Runs the sandbox card processor as its own process (`npm run sandbox`); its settings (SANDBOX_PROCESSOR_PORT,
 * SANDBOX_HOST, SANDBOX_SLOW_RESPONSE_MS, SANDBOX_PUBLIC_URL) are in docs/configuration.md.
 */
import path from 'node:path';
import { loadConfig } from '../platform/config.ts';
import { configOrExit } from '../platform/config-or-exit.ts';
import { startSandboxProcessor } from './processor-server.ts';
import { stopWithParent } from '../platform/stop-with-parent.ts';

const config = configOrExit(() => loadConfig());
const sandbox = await startSandboxProcessor({
  port: config.sandboxProcessorPort,
  host: config.sandboxHost,
  slowResponseMs: config.sandboxSlowResponseMs,
  // What it authorized survives a restart, as the payments in the database do.
  stateFile: path.resolve(config.dataDir, 'sandbox', 'ledger.json'),
  ...(config.sandboxPublicUrl ? { publicUrl: config.sandboxPublicUrl } : {}),
});
console.log(`sandbox processor listening on ${sandbox.url}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // `on`, not `once`: a second signal (the terminal's and the supervisor's, or its channel closing) must not kill it
  // mid-close, before its ledger is written.
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    void sandbox.close().then(() => process.exit(0));
  });
}
stopWithParent();
