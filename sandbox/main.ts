/**
 * Runs the sandbox card processor as its own process:
 *   node --import tsx sandbox/main.ts
 * SANDBOX_PORT (default 4100), SANDBOX_HOST (default 127.0.0.1), SANDBOX_SLOW_RESPONSE_MS (default 20000),
 * SANDBOX_PUBLIC_URL (base URL browsers use for 3-D Secure challenge pages; default the listening URL).
 */
import { startSandboxProcessor } from './processor-server.ts';

function integerSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name}: must be a non-negative integer, got "${raw}"`);
    process.exit(1);
  }
  return value;
}

const sandbox = await startSandboxProcessor({
  port: integerSetting('SANDBOX_PORT', 4100),
  host: process.env.SANDBOX_HOST || '127.0.0.1',
  slowResponseMs: integerSetting('SANDBOX_SLOW_RESPONSE_MS', 20_000),
  ...(process.env.SANDBOX_PUBLIC_URL ? { publicUrl: process.env.SANDBOX_PUBLIC_URL } : {}),
});
console.log(`sandbox processor listening on ${sandbox.url}`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    void sandbox.close().then(() => process.exit(0));
  });
}
