/**
 * The sandbox card processor: a separate HTTP server whose outcomes are decided by test card
 * (`test-cards.ts`) and amount, so every authorization the gateway makes is a real HTTP exchange.
 *
 * State lives in memory. Answers never contain the card number or the CVV (not even in error
 * messages: request bodies are parsed here so a parse error cannot quote them), and nothing is logged.
 *
 * HTTP API (JSON):
 *   POST /v1/authorizations                  authorize (idempotent by `reference`)
 *   GET  /v1/authorizations/:reference       status inquiry (404 `{error:"not_found"}`)
 *   POST /v1/authorizations/:id/3ds-complete `{proceedWithoutAuthentication}` → final answer; 409 while the challenge is pending
 *   POST /v1/authorizations/:id/void         `{id, status:"voided"}`
 *   GET  /challenge/:id                      the cardholder's challenge page (HTML)
 *   POST /challenge/:id                      the cardholder's choice, form-encoded or JSON `{outcome}`
 *   GET  /v1/_stats                          counts of real (non-replayed) authorizations
 */
import { randomInt, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import {
  APPROVED,
  INVALID_CARD_NUMBER,
  SCA_REQUIRED,
  THREE_DS_FAILED,
  VOIDED,
  findTestCard,
  luhnValid,
  networkOf,
  type CardNetwork,
} from './test-cards.ts';

export interface SandboxStats {
  /** Authorizations actually processed (replays of a known reference and HTTP 500 answers do not count). */
  readonly totalAuthorizations: number;
  readonly byOrderReference: Readonly<Record<string, number>>;
  readonly byReference: Readonly<Record<string, number>>;
}

export interface SandboxProcessorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Delay of the first answer for an amount ending in `.98`; default 20000. */
  slowResponseMs?: number;
  /** Base URL the cardholder's browser reaches the sandbox at (challenge pages); default the listening URL. */
  publicUrl?: string;
}

export interface SandboxProcessor {
  readonly url: string;
  close(): Promise<void>;
  stats(): SandboxStats;
}

type AnswerStatus = 'approved' | 'declined' | 'challenge_required' | 'voided';

/** The JSON answer of an authorization; what authorize, inquiry and 3ds-complete return. */
interface Answer {
  id: string;
  reference: string;
  status: AnswerStatus;
  code: number;
  message: string;
  authCode?: string;
  eci?: string;
  challengeUrl?: string;
}

interface Authorization {
  readonly id: string;
  readonly reference: string;
  readonly orderReference: string;
  readonly merchantId: string;
  readonly amount: string;
  readonly currency: string;
  readonly network: CardNetwork;
  answer: Answer;
  /** Present for an authorization that asked the cardholder for a 3-D Secure challenge. */
  challenge?: { readonly authenticationFails: boolean; state: 'pending' | 'authenticated' | 'failed' };
}

interface AuthorizationBody {
  reference: string;
  orderReference: string;
  merchantId: string;
  amount: string;
  currency: string;
  cardNumber: string;
  threeDSecure: boolean;
}

/** An error whose message is safe to answer (it never quotes request values). */
class SandboxHttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startSandboxProcessor(options: SandboxProcessorOptions = {}): Promise<SandboxProcessor> {
  const slowResponseMs = options.slowResponseMs ?? 20_000;
  const byReference = new Map<string, Authorization>();
  const byId = new Map<string, Authorization>();
  /** orderReference → the first merchant id that authorized for it (cascade card). */
  const firstMerchantByOrder = new Map<string, string>();
  const countByOrder = new Map<string, number>();
  /** Slow answers still waiting; released at once on close. */
  const pendingDelays = new Set<() => void>();
  let publicUrl = '';

  const app = Fastify({ logger: false, forceCloseConnections: true, bodyLimit: 64 * 1024 });

  // Own parsers: the default JSON parser's error message can quote the body (and so a card number).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      done(new SandboxHttpError(400, 'malformed JSON body'), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });

  app.setErrorHandler((error: { statusCode?: number; code?: string }, _request, reply) => {
    const statusCode = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
    if (error instanceof SandboxHttpError) return reply.code(statusCode).send({ error: error.message });
    return reply.code(statusCode).send({ error: statusCode >= 500 ? 'internal_error' : (error.code ?? 'bad_request') });
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ error: 'not_found' }));

  app.post('/v1/authorizations', async (request, reply) => {
    const body = parseAuthorizationBody(request.body);

    const known = byReference.get(body.reference);
    if (known) return reply.header('sandbox-replayed', 'true').send(known.answer);

    const cents = body.amount.slice(-2);
    if (cents === '97') return reply.code(500).send({ error: 'processor unavailable' });

    if (!firstMerchantByOrder.has(body.orderReference)) firstMerchantByOrder.set(body.orderReference, body.merchantId);
    const authorization = authorize(body);
    byReference.set(authorization.reference, authorization);
    byId.set(authorization.id, authorization);
    countByOrder.set(body.orderReference, (countByOrder.get(body.orderReference) ?? 0) + 1);

    // Snapshot: a 3DS completion during the delay must not change what this first answer says.
    const answer = { ...authorization.answer };
    if (cents === '98') await delay(slowResponseMs);
    return reply.send(answer);
  });

  app.get('/v1/authorizations/:reference', async (request, reply) => {
    const { reference } = request.params as { reference: string };
    const authorization = byReference.get(reference);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    return reply.send(authorization.answer);
  });

  app.post('/v1/authorizations/:id/3ds-complete', async (request, reply) => {
    const authorization = byId.get((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    const body = request.body;
    if (!isRecord(body) || typeof body.proceedWithoutAuthentication !== 'boolean') {
      throw new SandboxHttpError(400, 'proceedWithoutAuthentication must be a boolean');
    }
    const { challenge } = authorization;
    if (!challenge) return reply.code(409).send({ error: 'no_challenge', status: authorization.answer.status });
    // Already final (completed or voided): the same answer again.
    if (authorization.answer.status !== 'challenge_required') return reply.send(authorization.answer);
    if (challenge.state === 'pending') return reply.code(409).send({ status: 'challenge_pending' });

    const isNetworkB = authorization.network === 'NetworkB';
    if (challenge.state === 'authenticated') {
      authorization.answer = approvedAnswer(authorization, isNetworkB ? '02' : '05');
    } else if (body.proceedWithoutAuthentication) {
      // Authentication failed, authorized anyway: no liability shift.
      authorization.answer = approvedAnswer(authorization, isNetworkB ? '00' : '07');
    } else {
      authorization.answer = { id: authorization.id, reference: authorization.reference, status: 'declined', code: THREE_DS_FAILED.statusId, message: THREE_DS_FAILED.message };
    }
    return reply.send(authorization.answer);
  });

  app.post('/v1/authorizations/:id/void', async (request, reply) => {
    const authorization = byId.get((request.params as { id: string }).id);
    if (!authorization) return reply.code(404).send({ error: 'not_found' });
    const { status } = authorization.answer;
    if (status === 'declined') return reply.code(409).send({ error: 'not_voidable', status });
    if (status !== 'voided') {
      // Voiding an approval releases it; voiding a pending challenge cancels it.
      const { authCode } = authorization.answer;
      authorization.answer = {
        id: authorization.id,
        reference: authorization.reference,
        status: 'voided',
        code: VOIDED.statusId,
        message: VOIDED.message,
        ...(authCode ? { authCode } : {}),
      };
    }
    return reply.send({ id: authorization.id, status: 'voided' });
  });

  app.get('/challenge/:id', async (request, reply) => {
    const authorization = byId.get((request.params as { id: string }).id);
    reply.type('text/html; charset=utf-8');
    if (!authorization?.challenge) return reply.code(404).send(page('Unknown challenge', '<p>This 3-D Secure challenge does not exist.</p>'));
    if (authorization.challenge.state !== 'pending' || authorization.answer.status !== 'challenge_required') {
      return reply.send(page('Sandbox 3-D Secure challenge', `<p>This challenge is finished (${authorization.challenge.state}). You may close this window.</p>`));
    }
    const action = `/challenge/${encodeURIComponent(authorization.id)}`;
    return reply.send(
      page(
        'Sandbox 3-D Secure challenge',
        `<p>Merchant <strong>${escapeHtml(authorization.merchantId)}</strong> asks you to confirm a payment of
  <strong>${escapeHtml(authorization.amount)} ${escapeHtml(authorization.currency)}</strong>.</p>
<p>This is the sandbox processor: no bank is involved. Pick what the cardholder does.</p>
<form method="post" action="${action}"><input type="hidden" name="outcome" value="authenticate"><button type="submit">Authenticate</button></form>
<form method="post" action="${action}"><input type="hidden" name="outcome" value="fail"><button type="submit">Fail authentication</button></form>`,
      ),
    );
  });

  app.post('/challenge/:id', async (request, reply) => {
    const authorization = byId.get((request.params as { id: string }).id);
    const wantsJson = String(request.headers['content-type'] ?? '').includes('json') || String(request.headers.accept ?? '').includes('application/json');
    if (!authorization?.challenge) {
      return wantsJson ? reply.code(404).send({ error: 'not_found' }) : reply.code(404).type('text/html; charset=utf-8').send(page('Unknown challenge', '<p>This 3-D Secure challenge does not exist.</p>'));
    }
    const outcome = isRecord(request.body) ? request.body.outcome : undefined;
    if (outcome !== 'authenticate' && outcome !== 'fail') throw new SandboxHttpError(400, 'outcome must be "authenticate" or "fail"');
    const { challenge } = authorization;
    // The cardholder's first choice counts; later posts only show it.
    if (challenge.state === 'pending' && authorization.answer.status === 'challenge_required') {
      challenge.state = outcome === 'authenticate' && !challenge.authenticationFails ? 'authenticated' : 'failed';
    }
    if (wantsJson) return reply.send({ id: authorization.id, challenge: challenge.state });
    return reply
      .type('text/html; charset=utf-8')
      .send(page('Sandbox 3-D Secure challenge', `<p>Authentication ${challenge.state === 'authenticated' ? 'succeeded' : challenge.state === 'failed' ? 'failed' : 'is pending'}. You may close this window.</p>`));
  });

  app.get('/v1/_stats', async () => stats());

  const listenHost = options.host ?? '127.0.0.1';
  await app.listen({ port: options.port ?? 0, host: listenHost });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  const browsableHost = listenHost === '0.0.0.0' || listenHost === '::' ? '127.0.0.1' : listenHost.includes(':') ? `[${listenHost}]` : listenHost;
  const url = `http://${browsableHost}:${port}`;
  publicUrl = (options.publicUrl ?? url).replace(/\/+$/, '');

  return {
    url,
    stats,
    async close() {
      for (const release of [...pendingDelays]) release();
      await app.close();
    },
  };

  function stats(): SandboxStats {
    const references: Record<string, number> = {};
    for (const reference of byReference.keys()) references[reference] = 1;
    return {
      totalAuthorizations: byReference.size,
      byOrderReference: Object.fromEntries(countByOrder),
      byReference: references,
    };
  }

  function authorize(body: AuthorizationBody): Authorization {
    const id = `sbx_${randomUUID()}`;
    const network = networkOf(body.cardNumber);
    const authorization: Authorization = {
      id,
      reference: body.reference,
      orderReference: body.orderReference,
      merchantId: body.merchantId,
      amount: body.amount,
      currency: body.currency,
      network,
      answer: { id, reference: body.reference, status: 'declined', code: 0, message: '' },
    };
    const declined = (code: number, message: string): Answer => ({ id, reference: body.reference, status: 'declined', code, message });
    // Frictionless 3-D Secure: authenticated without a challenge.
    const frictionlessEci = body.threeDSecure ? (network === 'NetworkB' ? '02' : '05') : undefined;

    const card = findTestCard(body.cardNumber);
    const behaviour = card?.behaviour ?? (luhnValid(body.cardNumber) ? { kind: 'approve' as const } : undefined);
    if (!behaviour) {
      authorization.answer = declined(INVALID_CARD_NUMBER.statusId, INVALID_CARD_NUMBER.message);
      return authorization;
    }
    switch (behaviour.kind) {
      case 'approve':
        authorization.answer = approvedAnswer(authorization, frictionlessEci);
        break;
      case 'decline':
        authorization.answer = declined(behaviour.statusId, behaviour.message);
        break;
      case 'cascade':
        authorization.answer =
          firstMerchantByOrder.get(body.orderReference) === body.merchantId ? declined(behaviour.statusId, behaviour.message) : approvedAnswer(authorization, frictionlessEci);
        break;
      case 'challenge':
        if (!body.threeDSecure && !behaviour.redirect) {
          authorization.answer = declined(SCA_REQUIRED.statusId, SCA_REQUIRED.message);
        } else {
          authorization.challenge = { authenticationFails: behaviour.authenticationFails, state: 'pending' };
          authorization.answer = {
            id,
            reference: body.reference,
            status: 'challenge_required',
            code: 0,
            message: behaviour.redirect ? 'Browser redirect required' : '3-D Secure challenge required',
            challengeUrl: `${publicUrl}/challenge/${id}`,
            ...(behaviour.redirect ? { redirect: true } : {}),
          };
        }
        break;
    }
    return authorization;
  }

  function delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        clearTimeout(timer);
        pendingDelays.delete(release);
        resolve();
      };
      const timer = setTimeout(release, ms);
      pendingDelays.add(release);
    });
  }
}

function approvedAnswer(authorization: Authorization, eci: string | undefined): Answer {
  return {
    id: authorization.id,
    reference: authorization.reference,
    status: 'approved',
    code: APPROVED.statusId,
    message: APPROVED.message,
    authCode: newAuthCode(),
    ...(eci ? { eci } : {}),
  };
}

const AUTH_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';
function newAuthCode(): string {
  let code = '';
  for (let i = 0; i < 6; i++) code += AUTH_CODE_ALPHABET[randomInt(AUTH_CODE_ALPHABET.length)];
  return code;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates the authorization body; error messages name fields, never their values. */
function parseAuthorizationBody(body: unknown): AuthorizationBody {
  if (!isRecord(body)) throw new SandboxHttpError(400, 'body must be a JSON object');
  const problems: string[] = [];
  const text = (field: string, max = 200): string => {
    const value = body[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > max) {
      problems.push(`${field} must be a string of 1 to ${max} characters`);
      return '';
    }
    return value;
  };
  const reference = text('reference');
  const orderReference = text('orderReference');
  const merchantId = text('merchantId');
  const amount = text('amount', 20);
  if (amount && !/^\d{1,15}\.\d{2}$/.test(amount)) problems.push('amount must be a decimal string with two decimals, e.g. "29.99"');
  const currency = text('currency', 3);
  if (currency && !/^[A-Z]{3}$/.test(currency)) problems.push('currency must be an ISO 4217 code');
  if (typeof body.threeDSecure !== 'boolean') problems.push('threeDSecure must be a boolean');
  if (body.credentials !== undefined && !isRecord(body.credentials)) problems.push('credentials must be an object');

  let cardNumber = '';
  const card = body.card;
  if (!isRecord(card)) {
    problems.push('card must be an object');
  } else {
    if (typeof card.number !== 'string' || !/^\d{12,19}$/.test(card.number)) problems.push('card.number must be 12 to 19 digits');
    else cardNumber = card.number;
    if (!Number.isInteger(card.expiryMonth) || (card.expiryMonth as number) < 1 || (card.expiryMonth as number) > 12) problems.push('card.expiryMonth must be an integer from 1 to 12');
    if (!Number.isInteger(card.expiryYear) || (card.expiryYear as number) < 0 || (card.expiryYear as number) > 9999) problems.push('card.expiryYear must be an integer year');
    if (card.cvv !== undefined && (typeof card.cvv !== 'string' || !/^\d{3,4}$/.test(card.cvv))) problems.push('card.cvv must be 3 or 4 digits');
    if (card.holderName !== undefined && typeof card.holderName !== 'string') problems.push('card.holderName must be a string');
  }
  if (problems.length > 0) throw new SandboxHttpError(400, problems.join('; '));
  return { reference, orderReference, merchantId, amount, currency, cardNumber, threeDSecure: body.threeDSecure as boolean };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}form{display:inline-block;margin-right:1rem}button{font-size:1rem;padding:.5rem 1rem}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
}
