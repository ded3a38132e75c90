import { randomUUID } from 'node:crypto';
import pWaitFor from 'p-wait-for';
import type { EntityManager } from '@mikro-orm/postgresql';
import { claimEmailKey, findEmailKey, markEmailKeyDispatchFailed, storeEmailKeyResponse } from '../../data/queries/email-idempotency.ts';
import { findEmailSender, insertQueuedEmails } from '../../data/queries/emails.ts';
import type { EmailDispatcher } from '../../domain/email/email-dispatcher.ts';
import { EmailRequestError } from '../../domain/email/email-errors.ts';
import { parseBatchRequest, parseSendRequest, type ParsedEmailRequest } from '../../domain/email/email-message.ts';
import { requestIdentity } from '../../domain/email/idempotency.ts';
import { EMAIL_IDEMPOTENCY_DAYS } from '../../domain/email/limits.ts';
import type { StringTemplateCompiler } from '../../domain/email/string-templates.ts';
import { consumeRateLimit } from '../rate-limit/rate-limiter.ts';

export interface EmailRateLimit {
  /** Requests per minute of a tenant without its own `rateLimitPerMinute` (spec 8: 100). */
  readonly defaultPerMinute: number;
  readonly now: () => Date;
}

export interface EmailServiceDeps {
  readonly em: EntityManager;
  readonly dispatcher: EmailDispatcher;
  readonly compiler: StringTemplateCompiler;
  readonly rateLimit: EmailRateLimit;
  /** Logs a delivery that could not be confirmed started (the caller is told to retry). */
  readonly onDispatchFailure?: (error: unknown) => void;
}

/** The answer of `POST /api/email` (spec 4.5) or `/api/email/batch` (4.6), as first given and as replayed. */
export interface EmailAcceptance {
  readonly response: Record<string, unknown>;
  /** True when this is a repeat answered with the first request's response (nothing was sent again). */
  readonly replayed: boolean;
}

const QUEUED_MESSAGE = 'Email queued for delivery';
const BATCH_QUEUED_MESSAGE = 'Batch queued for delivery';
/** How long a repeat waits for the first request with its key to finish before answering 409. */
const IN_FLIGHT_WAIT_MS = 3_000;
const IN_FLIGHT_POLL_MS = 50;
/** A claim this old without a response belongs to a request that died between queueing and starting delivery. */
const ABANDONED_CLAIM_MS = 30_000;

const KEY_LIFETIME_MS = EMAIL_IDEMPOTENCY_DAYS * 24 * 60 * 60 * 1000;

/** Every `from` checked against the tenant's sender domains (in request order). */
function authorizeSenders(senderDomains: readonly string[], request: ParsedEmailRequest, kind: 'single' | 'batch'): void {
  const allowed = new Set(senderDomains);
  request.messages.forEach((message, index) => {
    if (!allowed.has(message.fromDomain)) {
      throw new EmailRequestError({ kind: 'unauthorized_domain', domain: message.fromDomain, field: kind === 'batch' ? `emails[${index}].from` : 'from' });
    }
  });
}

function responseOf(kind: 'single' | 'batch', request: ParsedEmailRequest, body: Record<string, unknown>, emailIds: readonly string[]): Record<string, unknown> {
  if (kind === 'single') {
    return { success: true, message: QUEUED_MESSAGE, data: { message: QUEUED_MESSAGE, id: emailIds[0], to: body.to, tenantKey: request.tenantKey } };
  }
  return {
    success: true,
    message: BATCH_QUEUED_MESSAGE,
    data: { message: BATCH_QUEUED_MESSAGE, count: emailIds.length, responses: emailIds.map((id) => ({ id })), tenantKey: request.tenantKey },
  };
}

/**
 * Accepts one e-mail or a batch: checks the request whole (nothing is stored when any part is refused), counts it
 * against the tenant's rate limit, claims its idempotency key and stores the e-mails as queued in one transaction,
 * then starts their delivery and answers; SMTP happens later, in the delivery workflow. A repeat of a live key
 * replays the first answer (before the sender domains are checked again) and sends nothing; the same key with
 * another request, or while the first is unfinished, is a conflict.
 */
export async function acceptEmails(deps: EmailServiceDeps, kind: 'single' | 'batch', body: unknown): Promise<EmailAcceptance> {
  const request = kind === 'single' ? parseSendRequest(body, deps.compiler) : parseBatchRequest(body, deps.compiler);
  const sender = await findEmailSender(deps.em, request.tenantKey);
  if (!sender) throw new EmailRequestError({ kind: 'invalid_tenant_key' });
  const tenantId = sender.tenantId;
  // Per tenant (spec 8), repeats included: one atomic statement counts it for every gateway process.
  await consumeRateLimit(deps.em, `email-tenant:${tenantId}`, sender.rateLimitPerMinute ?? deps.rateLimit.defaultPerMinute, deps.rateLimit.now());
  const { key, requestHash } = requestIdentity(kind, body as Record<string, unknown>);
  const respond = (ids: readonly string[]) => responseOf(kind, request, body as Record<string, unknown>, ids);

  // A live key answers from its first request, before the sender domains are checked again: a domain removed
  // since must not turn the repeat of an accepted request into a 403.
  const existing = await findEmailKey(deps.em, tenantId, key);
  if (existing && existing.ageMs < KEY_LIFETIME_MS) return repeatOf(deps, { tenantId, key, requestHash, kind, respond });
  authorizeSenders(sender.senderDomains, request, kind);

  const emailIds = request.messages.map(() => randomUUID());
  const deliveryId = kind === 'single' ? emailIds[0]! : randomUUID();
  const claim = { tenantId, key, requestHash, deliveryId, emailIds };
  const claimed = await deps.em.transactional(async (tx) => {
    if (!(await claimEmailKey(tx, claim))) return false;
    await insertQueuedEmails(tx, {
      tenantId,
      batchId: kind === 'batch' ? deliveryId : null,
      emails: request.messages.map((message, index) => ({ id: emailIds[index]!, batchIndex: kind === 'batch' ? index : null, message })),
    });
    return true;
  });
  if (!claimed) return repeatOf(deps, { tenantId, key, requestHash, kind, respond });
  const response = respond(emailIds);
  await startDelivery(deps, { deliveryId, kind, tenantId, emailIds, key }, response);
  return { response, replayed: false };
}

/**
 * Starts the delivery of stored e-mails and keeps the answer for repeats. A failed start is ambiguous (Temporal may
 * have started the workflow before the error reached us), so the e-mails and the claim stay: deleting them could
 * leave a running delivery without its records. The claim is marked so that a retry with the same key starts the
 * same delivery id at once; the workflow id makes a second start a no-op, so nothing is sent twice.
 */
async function startDelivery(
  deps: EmailServiceDeps,
  delivery: { deliveryId: string; kind: 'single' | 'batch'; tenantId: number; emailIds: readonly string[]; key: string },
  response: Record<string, unknown>,
): Promise<void> {
  const claim = { tenantId: delivery.tenantId, key: delivery.key, deliveryId: delivery.deliveryId };
  try {
    await deps.dispatcher.dispatch({ deliveryId: delivery.deliveryId, kind: delivery.kind, tenantId: delivery.tenantId, emailIds: delivery.emailIds });
  } catch (error) {
    deps.onDispatchFailure?.(error);
    await markEmailKeyDispatchFailed(deps.em, claim);
    throw new EmailRequestError({ kind: 'delivery_not_started' });
  }
  await storeEmailKeyResponse(deps.em, claim, response);
}

/** A request whose key was already claimed: the first answer, once there is one. */
async function repeatOf(deps: EmailServiceDeps, input: { tenantId: number; key: string; requestHash: string; kind: 'single' | 'batch'; respond: (emailIds: readonly string[]) => Record<string, unknown> }): Promise<EmailAcceptance> {
  return pWaitFor(
    async () => {
      const existing = await findEmailKey(deps.em, input.tenantId, input.key);
      // Expired and taken over meanwhile cannot happen within the wait; a missing claim means the tenant's data went.
      if (!existing) throw new EmailRequestError({ kind: 'idempotency_conflict', message: 'The request with this idempotencyKey failed; retry it' });
      if (existing.requestHash !== input.requestHash) {
        throw new EmailRequestError({ kind: 'idempotency_conflict', message: 'idempotencyKey was already used with a different request' });
      }
      if (existing.response) return pWaitFor.resolveWith<EmailAcceptance>({ response: existing.response, replayed: true });
      if (existing.dispatchFailed || existing.ageMs > ABANDONED_CLAIM_MS) {
        // Its e-mails are stored; start their delivery (a no-op if it did start) and keep the answer.
        const response = input.respond(existing.emailIds);
        await startDelivery(deps, { deliveryId: existing.deliveryId, kind: input.kind, tenantId: input.tenantId, emailIds: existing.emailIds, key: input.key }, response);
        return pWaitFor.resolveWith<EmailAcceptance>({ response, replayed: true });
      }
      return false;
    },
    {
      interval: IN_FLIGHT_POLL_MS,
      timeout: {
        milliseconds: IN_FLIGHT_WAIT_MS,
        fallback: () => {
          throw new EmailRequestError({ kind: 'idempotency_conflict', message: 'A request with this idempotencyKey is still in progress' });
        },
      },
    },
  );
}
