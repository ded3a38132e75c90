import { describe, expect, it } from 'vitest';
import { ConfigError, gatewayBaseUrl, loadConfig } from '../../platform/config.ts';
import { hostedWorkerConfig } from '../../worker/hosted-worker.ts';
import { workerTuningOf } from '../../worker/worker-from-config.ts';
import { OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS } from '../../workflows/contract/call-timeouts.ts';

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('configuration from the environment', () => {
  it('decodes values into what the product uses', () => {
    const key = Buffer.alloc(32, 9);
    const config = loadConfig({ DATA_ENCRYPTION_KEY: key.toString('base64'), WEBHOOK_RETRY_SCHEDULE: '0, 10,60', PORT: '8080', DATABASE_URL: 'postgres://app:pw@db:5432/payments' });
    expect(config.dataEncryptionKey).toEqual(key);
    expect(config).toMatchObject({ webhookRetrySchedule: [0, 10, 60], port: 8080, databaseUrl: 'postgres://app:pw@db:5432/payments' });
  });

  it("runs 200 workflow tasks at once in a gateway's worker unless WORKER_MAX_CONCURRENT_WORKFLOW_TASKS says otherwise, the SDK's default in a worker process", () => {
    expect(workerTuningOf(hostedWorkerConfig(loadConfig({}))).maxConcurrentWorkflowTasks).toBe(200);
    expect(workerTuningOf(hostedWorkerConfig(loadConfig({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '60' }))).maxConcurrentWorkflowTasks).toBe(60);
    expect(workerTuningOf(loadConfig({})).maxConcurrentWorkflowTasks).toBeUndefined();
    expect(workerTuningOf(loadConfig({ WORKER_WORKFLOW_THREADS: '2', WORKER_WORKFLOW_TASK_POLLERS: '4', WORKER_MAX_CACHED_WORKFLOWS: '500' }))).toEqual({
      maxCachedWorkflows: 500,
      workflowThreads: 2,
      maxConcurrentWorkflowTasks: undefined,
      workflowTaskPollers: 4,
    });
  });

  it('refuses a URL of another scheme and a host that is no host when it loads, not when it first connects', () => {
    expect(problemsOf({ DATABASE_URL: 'mysql://x', SANDBOX_PROCESSOR_URL: 'ftp://x', PUBLIC_BASE_URL: 'file:///tmp', HOST: 'not a host', SANDBOX_HOST: 'a/b' })).toEqual([
      'HOST: must be a host name or an IP address',
      'PUBLIC_BASE_URL: must be a http:// or https:// URL',
      'DATABASE_URL: must be a postgres:// or postgresql:// URL',
      'SANDBOX_PROCESSOR_URL: must be a http:// or https:// URL',
      'SANDBOX_HOST: must be a host name or an IP address',
    ]);
    expect(loadConfig({ HOST: '0.0.0.0', SANDBOX_HOST: '::1', DATABASE_URL: 'postgresql://app@db/payments', SANDBOX_PROCESSOR_URL: 'https://sandbox.example' })).toMatchObject({ host: '0.0.0.0', sandboxHost: '::1' });
  });

  it("prints the gateway's address as a URL a browser opens, for any listen address", () => {
    const baseUrl = (HOST: string) => gatewayBaseUrl(loadConfig({ HOST, PORT: '3000' }));
    expect(baseUrl('0.0.0.0')).toBe('http://127.0.0.1:3000');
    expect(baseUrl('::')).toBe('http://[::1]:3000');
    expect(baseUrl('::1')).toBe('http://[::1]:3000');
    expect(baseUrl('fd00::5')).toBe('http://[fd00::5]:3000');
    expect(baseUrl('gateway.internal')).toBe('http://gateway.internal:3000');
    expect(gatewayBaseUrl(loadConfig({ HOST: '::', PUBLIC_BASE_URL: 'https://pay.example' }))).toBe('https://pay.example');
  });

  it('takes proxies as addresses and ranges a matcher can read, refusing a prefix longer than the address', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1,::1/128,fd00::/64' }).trustedProxies).toEqual(['10.0.0.0/8', '127.0.0.1', '::1/128', 'fd00::/64']);
    for (const written of ['10.0.0.0/99', '10.0.0.0/33', '999.1.1.1', 'fd00::/129', '10.0.0.0/8,', '1:::2', ':::::', '::ffff:999.1.1.1']) {
      expect(problemsOf({ TRUSTED_PROXIES: written }), written).toEqual(['TRUSTED_PROXIES: must be IP addresses or CIDR ranges, comma-separated']);
    }
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ port: 3000, databaseUrl: undefined });
  });

  it('names each bad variable with the rule it breaks, without echoing secrets', () => {
    const problems = problemsOf({ LOG_LEVEL: 'loud', DATABASE_URL: 'not a url', TEMPORAL_ADDRESS: 'localhost', OPERATOR_TOKEN: 'short-secret', BODY_LIMIT_BYTES: '5' });
    expect(problems).toEqual([
      'LOG_LEVEL: must be one of: fatal, error, warn, info, debug, trace, silent',
      'DATABASE_URL: must be a postgres:// or postgresql:// URL',
      'TEMPORAL_ADDRESS: must be host:port',
      'OPERATOR_TOKEN: must be at least 16 characters',
      'BODY_LIMIT_BYTES: must be >= 1024',
    ]);
    expect(problems.join('\n')).not.toContain('short-secret');
  });
});

describe('activity limits against the configuration', () => {
  it('lets an activity making one outside call outlast the longest call the configuration allows', () => {
    const longest = 120_000;
    expect(problemsOf({ PROCESSOR_TIMEOUT_MS: String(longest), WEBHOOK_TIMEOUT_MS: String(longest) })).toEqual([]);
    expect(problemsOf({ PROCESSOR_TIMEOUT_MS: String(longest + 1) })).not.toEqual([]);
    expect(problemsOf({ WEBHOOK_TIMEOUT_MS: String(longest + 1) })).not.toEqual([]);
    expect(OUTSIDE_CALL_ACTIVITY_TIMEOUT_MS).toBeGreaterThanOrEqual(longest + 30_000);
  });
});
