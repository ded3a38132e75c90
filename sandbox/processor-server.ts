/**
 * The sandbox card processor: a separate HTTP server whose outcomes are decided by test card
 * (`test-cards.ts`) and amount, so every authorization the gateway makes is a real HTTP exchange.
 *
 * State lives in memory (`ledger.ts`), saved to `stateFile` when one is given (the sandbox process keeps it under
 * DATA_DIR, so a restarted local stack can still capture, void and refund what it authorized). Answers never contain the card number or the CVV (not even in
 * error messages: `http-setup.ts` parses request bodies itself so a parse error cannot quote them),
 * and nothing is logged.
 *
 * HTTP API (JSON):
 *   POST /v1/authorizations                  authorize (idempotent by `reference`)
 *   GET  /v1/authorizations/:reference       status inquiry (404 `{error:"not_found"}`)
 *   POST /v1/authorizations/:id/3ds-complete `{proceedWithoutAuthentication}` → final answer; 409 while the challenge is pending
 *   POST /v1/authorizations/:id/void         `{id, status:"voided"}` (409 once captured)
 *   POST /v1/authorizations/:id/capture      captures an authorization made with `capture: false` → `{id, status:"captured", code}`
 *   POST /v1/authorizations/:id/refunds      `{reference, amount}` → `{id, status:"refunded"|"declined", code}` (idempotent by `reference`)
 *   GET  /v1/refunds/:reference              refund inquiry (404 `{error:"not_found"}`)
 *   GET  /challenge/:id                      the cardholder's challenge page (HTML)
 *   POST /challenge/:id                      the cardholder's choice, form-encoded or JSON `{outcome}`
 *   GET  /v1/_stats                          counts of real (non-replayed) authorizations
 */
import Fastify from 'fastify';
import { registerAuthorizationRoutes } from './authorization-routes.ts';
import { registerChallengeRoutes } from './challenge-routes.ts';
import { registerRefundRoutes } from './refund-routes.ts';
import { installSafeHttp } from './http-setup.ts';
import { createLedger, type SandboxStats } from './ledger.ts';
import { readLedgerFile, saveLedgerToFile } from './ledger-file.ts';
import { createSlowAnswers } from './slow-answers.ts';

export type { SandboxStats } from './ledger.ts';

export interface SandboxProcessorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay of the first answer for an amount ending in `.98`; default 20000. */
  slowResponseMs?: number;
  /** Base URL the cardholder's browser reaches the sandbox at (challenge pages); default the listening URL. */
  publicUrl?: string;
  /** Where the ledger is kept across restarts; default none (memory only, as tests want). */
  stateFile?: string;
}

export interface SandboxProcessor {
  readonly url: string;
  close(): Promise<void>;
  stats(): SandboxStats;
}

export async function startSandboxProcessor(options: SandboxProcessorOptions = {}): Promise<SandboxProcessor> {
  const ledger = createLedger(options.stateFile ? readLedgerFile(options.stateFile) : undefined);
  const saved = options.stateFile ? saveLedgerToFile(ledger, options.stateFile) : undefined;
  const slowAnswers = createSlowAnswers();
  let publicUrl = '';

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 64 * 1024 });
  installSafeHttp(app);
  // Every change comes from a POST (authorize, challenge answer, 3-D Secure completion, capture, void, refund), made
  // before its answer is sent. Saved when the answer is done or its caller has gone (a caller killed while a slow
  // answer waits): `close` fires for both, where `onResponse` would never fire for the second. A caller gone even
  // before its change was made (while its body was read) has it saved with the next POST or when the sandbox stops.
  if (saved) app.addHook('onRequest', async (request, reply) => void (request.method === 'POST' && reply.raw.once('close', saved.changed)));
  registerAuthorizationRoutes(app, { ledger, slowAnswers, slowResponseMs: options.slowResponseMs ?? 20_000, publicUrl: () => publicUrl });
  registerChallengeRoutes(app, ledger);
  registerRefundRoutes(app, { ledger, slowAnswers, slowResponseMs: options.slowResponseMs ?? 20_000 });
  app.get('/v1/_stats', async () => ledger.stats());

  const listenHost = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host: listenHost });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const browsableHost = listenHost === '0.0.0.0' || listenHost === '::' ? '127.0.0.1' : listenHost.includes(':') ? `[${listenHost}]` : listenHost;
  const url = `http://${browsableHost}:${port}`;
  publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');

  return {
    url,
    stats: () => ledger.stats(),
    async close() {
      slowAnswers.releaseAll();
      await app.close();
      saved?.flush();
    },
  };
}
