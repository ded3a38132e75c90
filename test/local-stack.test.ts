import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openOrm } from '../data/orm.ts';
import { portIsOpen } from '../scripts/local-stack/local-runtime.ts';
import { isRunning } from '../scripts/local-stack/leftovers.ts';
import { freePort } from './support/free-port.ts';

/**
 * `npm start` as a developer runs it: the real start script with its own DATA_DIR and free ports, so it
 * runs beside the suite's servers. One stack serves the tests below, in order; the last one stops it.
 */
const REPO = path.resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'local-stack-'));
let ports: Record<'gateway' | 'sandbox' | 'temporal' | 'temporalUi' | 'postgres' | 'webhooks' | 'inboxSmtp' | 'inboxWeb', number>;
let stack: ChildProcess;
let output = '';
let exited: Promise<number | null>;
let demo: { apiKey: string; productId: number; emailTenantKey: string };

function stackEnv(): NodeJS.ProcessEnv {
  // The suite's own settings (its database, Temporal, sandbox, NODE_ENV=test) must not leak into the stack.
  const { DATABASE_URL, TEMPORAL_ADDRESS, SANDBOX_PROCESSOR_URL, OPERATOR_TOKEN, DATA_ENCRYPTION_KEY, NODE_ENV, ...inherited } = process.env;
  return {
    ...inherited,
    DATA_DIR: dataDir,
    PORT: String(ports.gateway),
    SANDBOX_PROCESSOR_PORT: String(ports.sandbox),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.temporalUi),
    EMBEDDED_POSTGRES_PORT: String(ports.postgres),
    DEV_WEBHOOK_RECEIVER_PORT: String(ports.webhooks),
    DEV_INBOX_SMTP_PORT: String(ports.inboxSmtp),
    DEV_INBOX_WEB_PORT: String(ports.inboxWeb),
    // A slow sandbox answer (amount .98) that outlives no processor timeout: the worker is killed while it waits.
    SANDBOX_SLOW_RESPONSE_MS: '6000',
    PROCESSOR_TIMEOUT_MS: '8000',
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not reached in ${timeoutMs / 1000} s; start output:\n${output}`);
}

const base = () => `http://127.0.0.1:${ports.gateway}`;

/** Processes started (directly or not) by `root`, by /proc, whose command line contains `needle`. */
function descendants(root: number, needle: string): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) if (parent === root) return true;
    return false;
  };
  return [...parents.keys()].filter((pid) => {
    if (!isDescendant(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle);
    } catch {
      return false;
    }
  });
}

/** Runs `npm start`'s script and waits for its banner. */
async function startStack(): Promise<void> {
  output = '';
  stack = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'scripts/start.ts')], { cwd: REPO, env: stackEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  stack.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  stack.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  exited = new Promise((resolve) => stack.once('exit', (code) => resolve(code)));
  await until('the start banner', async () => output.includes('Press Ctrl-C to stop'), 240_000);
}

/** PostgreSQL and Temporal of a start killed outright, which the next start took over. */
let takenOver: number[] = [];

beforeAll(async () => {
  ports = { gateway: await freePort(), sandbox: await freePort(), temporal: await freePort(), temporalUi: await freePort(), postgres: await freePort(), webhooks: await freePort(), inboxSmtp: await freePort(), inboxWeb: await freePort() };
  await startStack();

  const credentials = JSON.parse(
    (await promisify(execFile)(process.execPath, ['--import', 'tsx', path.join(REPO, 'scripts/credentials.ts'), '--json'], { cwd: REPO, env: stackEnv() })).stdout,
  );
  const tenant = credentials.demo[0];
  demo = { apiKey: tenant.apiKeys[0].key, productId: tenant.products.find((product: { slug: string }) => product.slug === 'ebook').id, emailTenantKey: tenant.emailTenantKey };
}, 300_000);

afterAll(async () => {
  // Only reached with the stack still up when a test failed: stop it, forcefully if need be.
  if (stack?.exitCode === null && stack.signalCode === null) {
    stack.kill('SIGTERM');
    const timer = setTimeout(() => stack.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 90_000);

async function submit(pan: string, partnerSession: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base()}/api/${demo.productId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: demo.apiKey, ...headers },
    body: JSON.stringify({ card: { pan, expiryMonth: 12, expiryYear: new Date().getFullYear() + 2, cvv: '123' }, email: `${partnerSession}@example.com`, partnerSession }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function authorizations(submitOrderId: number): Promise<number> {
  const stats = (await (await fetch(`http://127.0.0.1:${ports.sandbox}/v1/_stats`)).json()) as { byOrderReference: Record<string, number> };
  return stats.byOrderReference[`ord${submitOrderId}`] ?? 0;
}

describe('npm start', () => {
  it('prints where everything is and approves a payment with the demo key; the demo webhook reaches the local receiver', async () => {
    for (const shown of [`${base()}/graphql`, `${base()}/docs`, `127.0.0.1:${ports.temporalUi}`, `127.0.0.1:${ports.webhooks}/webhooks`, demo.apiKey, path.join(dataDir, 'logs')]) {
      expect(output).toContain(shown);
    }
    const { status, body } = await submit('4242424242424242', 'local-stack-1');
    expect(status).toBe(200);
    expect(body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636 });
    await until('the webhook printed', async () => /webhook transaction\.completed .* signature ok/.test(output), 60_000);
    // Children's logs go to files, not the terminal, and the inbox announces itself in the banner only.
    expect(output).not.toContain('"msg":"request completed"');
    expect(output).not.toContain('MailDev API running');
    expect(readFileSync(path.join(dataDir, 'logs', 'gateway.log'), 'utf8')).toContain('request completed');
  });

  it('sends the demo tenant\'s e-mail to the local inbox, whose page the banner prints', async () => {
    const inbox = `http://127.0.0.1:${ports.inboxWeb}`;
    expect(output).toContain(`Mail inbox       ${inbox}`);
    const to = `local-stack-${Date.now()}@example.com`;
    const response = await fetch(`${base()}/api/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        tenant_key: demo.emailTenantKey,
        from: 'Demo shop <orders@demo.example>',
        to,
        subject: 'Welcome to the demo',
        templateType: 'react',
        templateName: 'generic',
        data: { heading: 'Hello', bodyContent: 'It works.' },
      }),
    });
    expect(response.status).toBe(200);
    const received = await until('the e-mail in the inbox', async () => {
      const emails = (await (await fetch(`${inbox}/api/email`)).json()) as { subject: string; to: { address: string }[] }[];
      return emails.find((email) => email.to.some((recipient) => recipient.address === to));
    });
    expect(received.subject).toBe('Welcome to the demo');
    // The inbox page, as a browser asks for it.
    const page = await fetch(inbox, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('restarts a worker killed mid-payment; the gateway keeps answering and the payment completes with one authorization', async () => {
    const orm = await openOrm({ databaseUrl: `postgres://postgres:postgres@127.0.0.1:${ports.postgres}/payments`, poolSize: 1 });
    try {
      // .98: the sandbox records the authorization at once and answers late, so the worker dies while it waits.
      await orm.em.fork().execute(`update products set price = '12.98' where id = ?`, [demo.productId]);
      const [worker] = descendants(stack.pid!, 'worker/main.ts');
      expect(worker).toBeDefined();

      const submitted = submit('4242424242424242', 'local-stack-2');
      const submitOrderId = await until('the authorization at the sandbox', async () => {
        const [order] = await orm.em.fork().execute<{ id: number }[]>(`select id from orders where partner_session = 'local-stack-2'`);
        return order && (await authorizations(order.id)) === 1 ? order.id : undefined;
      });
      process.kill(worker!, 'SIGKILL');

      expect((await fetch(`${base()}/healthz`)).status).toBe(200);
      await until('a new worker process', async () => descendants(stack.pid!, 'worker/main.ts').some((pid) => pid !== worker));
      expect(output).toMatch(/worker exited \(signal SIGKILL\); restarting it/);

      const { status, body } = await submitted;
      expect(status).toBe(200);
      expect(body).toMatchObject({ info: 'Success', chargeSuccess: true, statusId: 2636, submitOrderId });
      expect(await authorizations(submitOrderId)).toBe(1);
    } finally {
      await orm.close();
    }
  });

  it('starts its Temporal dev server again when it is killed; payments go on on the same history', async () => {
    const [temporal] = descendants(stack.pid!, 'start-dev');
    expect(temporal).toBeDefined();
    process.kill(temporal!, 'SIGKILL');
    await until('the Temporal dev server started again', async () => output.includes('Temporal dev server running again'));
    expect(output).toMatch(/Temporal dev server exited \(signal SIGKILL\); starting it again/);
    expect(descendants(stack.pid!, 'start-dev')).not.toContain(temporal);

    // The gateway's client and the worker reconnect by themselves: ready again (Temporal answers, a worker polls).
    await until('the gateway ready again', async () => (await fetch(`${base()}/readyz`)).ok);
    // Another card than the other tests' (the demo allows three submits of a card in ten minutes), one payment: a
    // 503 met while a connection still comes back is sent again with its key, never as a new payment.
    const key = { 'idempotency-key': 'local-stack-temporal' };
    const { status, body } = await until('an answered payment', async () => {
      const answer = await submit('5555555555554444', 'local-stack-temporal', key);
      // 503: not taken, or not answered in time; 409: that first request still running. Either is asked again.
      return answer.status === 503 || answer.status === 409 ? undefined : answer;
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ info: 'Success', chargeSuccess: true });
    expect(await authorizations(body.submitOrderId)).toBe(1);
  });

  it('killed outright, leaves no gateway, worker or sandbox; the next start takes over its PostgreSQL and Temporal', async () => {
    // The copy that supervises everything (the launcher in the terminal's group starts it).
    const supervisor = Number(readFileSync(path.join(dataDir, 'npm-start.pid'), 'utf8'));
    const entryPoints = ['api/main.ts', 'worker/main.ts', 'sandbox/main.ts'].flatMap((entry) => descendants(supervisor, entry));
    const servers = [...descendants(supervisor, 'bin/postgres'), ...descendants(supervisor, 'start-dev')];
    expect(entryPoints).toHaveLength(3);
    expect(servers).toHaveLength(2);
    process.kill(supervisor, 'SIGKILL');
    await exited;
    // Each stops as on SIGTERM: a worker drains, a gateway finishes what it was doing (its own limits, well past 30 s
    // on a loaded machine).
    await until('its entry points gone', async () => entryPoints.every((pid) => !isRunning(pid)), 120_000);
    expect(await portIsOpen(ports.gateway)).toBe(false);
    // Not its entry points: they stay, and nothing else stops them.
    expect(servers.every(isRunning)).toBe(true);

    await startStack();
    takenOver = servers;
    const { status, body } = await submit('4242424242424242', 'local-stack-3');
    expect(status).toBe(200);
    expect(body).toMatchObject({ info: 'Success', chargeSuccess: true });
  }, 420_000);

  it('stops every process once on SIGTERM and frees every port', async () => {
    const processes = [...descendants(stack.pid!, ''), ...takenOver];
    expect(processes.length).toBeGreaterThanOrEqual(6); // its own copy, PostgreSQL, Temporal, sandbox, worker, gateway
    stack.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const [name, port] of Object.entries(ports)) expect({ name, open: await portIsOpen(port) }).toEqual({ name, open: false });
    expect(processes.filter((pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '))).toEqual([]);
    expect(output).not.toMatch(/IllegalStateError|Error:/);
  });
});
