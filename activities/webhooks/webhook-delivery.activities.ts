import { LockMode, type MikroORM } from '@mikro-orm/postgresql';
import { recordAuditEntry } from '../../data/queries/audit-entries.ts';
import { ApplicationFailure } from '@temporalio/common';
import type { SecretBox } from '../../domain/crypto/secret-box.ts';
import type { Logger } from '../../domain/logger.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../schema/entities/index.ts';
import { signWebhook } from '../../domain/webhooks/signing.ts';
import { ENDPOINT_GONE_REASON, parseRetryAfter } from '../../domain/webhooks/retry-policy.ts';
import { storableText } from '../../domain/validation/hostile-text.ts';
import { findUnstartedDeliveries, markDeliveriesSwept as markSwept, type UnstartedDelivery } from '../../data/queries/webhook-deliveries.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

export type AttemptOutcome =
  | { kind: 'delivered'; httpStatus: number }
  | { kind: 'failed'; httpStatus?: number; error?: string; retryAfterSeconds?: number }
  /** 410 Gone: the receiver asks never to be called again. */
  | { kind: 'gone' }
  /** The endpoint was disabled (or removed) meanwhile. */
  | { kind: 'endpoint_disabled' }
  /** The delivery was ended, or sent again as a later run: this run is over. */
  | { kind: 'superseded' };

export type DeliveryConclusion = 'delivered' | 'failed' | 'endpoint_disabled';

export interface WebhookActivityDeps {
  readonly orm: MikroORM;
  readonly secretBox: SecretBox;
  readonly logger: Logger;
  readonly fetch?: typeof fetch;
}

const SNIPPET_LENGTH = 500;
/** What is read of a receiver's answer for its snippet; the rest is never downloaded (an answer may be gigabytes). */
const SNIPPET_BYTES = 4096;

/** At most the first `limit` bytes of an answer's body as text; the rest is cancelled unread. Never throws. */
async function leadingText(response: Response, limit: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // A body that broke off: what arrived is the snippet.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit));
}

export function createWebhookDeliveryActivities(deps: WebhookActivityDeps) {
  const httpFetch = deps.fetch ?? fetch;

  /**
   * The endpoint's signing secrets. One that cannot be opened (stored under another data-encryption key) will not open
   * on a retry either: the delivery fails at once rather than being retried for a day.
   */
  function openSecrets(endpoint: WebhookEndpoint): string[] {
    try {
      return [endpoint.secretCiphertext, endpoint.previousSecretCiphertext].filter((s): s is string => !!s).map((s) => deps.secretBox.open(s));
    } catch {
      throw ApplicationFailure.nonRetryable(`The signing secret of webhook endpoint ${endpoint.id} cannot be opened`, 'EndpointSecretUnreadable');
    }
  }

  /** The attempt's signature headers; a secret `standardwebhooks` cannot decode will not decode on a retry either. */
  function sign(endpoint: WebhookEndpoint, message: Parameters<typeof signWebhook>[0]): ReturnType<typeof signWebhook> {
    try {
      return signWebhook(message);
    } catch {
      throw ApplicationFailure.nonRetryable(`The signing secret of webhook endpoint ${endpoint.id} is not a usable whsec_ secret`, 'EndpointSecretUnreadable');
    }
  }

  /** One signed POST; the attempt is recorded whatever happens. Only a 2xx answer counts as delivered. */
  async function attemptWebhookDelivery(input: { deliveryId: string; run?: number; attemptNumber: number; timeoutMs: number }): Promise<AttemptOutcome> {
    const em = deps.orm.em.fork();
    const delivery = await em.findOne(WebhookDelivery, { id: input.deliveryId }, { populate: ['endpoint'] });
    if (!delivery) throw deliveryGone(input.deliveryId);
    // A run is sent again only once it ended, so a run that finds a later one, or its delivery ended, never attempts
    // again (a first run started anew past Temporal's retention included).
    if (delivery.redeliveries !== (input.run ?? 0) || delivery.state !== 'pending') return { kind: 'superseded' };
    const endpoint = delivery.endpoint;
    if (endpoint.disabledAt) return { kind: 'endpoint_disabled' };

    const secrets = openSecrets(endpoint);
    const attemptedAt = new Date();
    const headers = sign(endpoint, { id: delivery.id, timestampSeconds: Math.floor(attemptedAt.getTime() / 1000), body: delivery.body, secrets });
    const started = performance.now();
    let outcome: AttemptOutcome;
    let httpStatus: number | null = null;
    let snippet: string | null = null;
    let error: string | null = null;
    try {
      const response = await httpFetch(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'payments-gateway-webhooks/1', ...headers },
        body: delivery.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(input.timeoutMs),
      });
      httpStatus = response.status;
      snippet = storableText(await leadingText(response, SNIPPET_BYTES), SNIPPET_LENGTH) || null;
      if (response.status >= 200 && response.status < 300) outcome = { kind: 'delivered', httpStatus };
      else if (response.status === 410) outcome = { kind: 'gone' };
      else {
        error = `HTTP ${response.status}`;
        outcome = { kind: 'failed', httpStatus, error, retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')) };
      }
    } catch (cause) {
      error = storableText(describeSendFailure(cause, input.timeoutMs), 1000);
      outcome = { kind: 'failed', error };
    }
    const latencyMs = Math.round(performance.now() - started);

    // The event was sent: an attempt that cannot be recorded is logged, never sent again by a retry of this activity.
    try {
      await em.transactional(async (tx) => {
        tx.create(WebhookAttempt, { delivery: delivery.id, attemptNumber: input.attemptNumber, attemptedAt, httpStatus, latencyMs, error, responseSnippet: snippet });
        await tx.nativeUpdate(WebhookDelivery, { id: delivery.id }, { attemptCount: input.attemptNumber });
      });
    } catch (cause) {
      deps.logger.error({ deliveryId: delivery.id, attempt: input.attemptNumber, err: cause }, 'webhook attempt sent but not recorded');
    }
    deps.logger.info({ deliveryId: delivery.id, attempt: input.attemptNumber, httpStatus, latencyMs, outcome: outcome.kind }, 'webhook attempt');
    return outcome;
  }

  /**
   * Records the final state of the delivery's run; a 410 also disables the endpoint so no further event goes there.
   * Only while the delivery is still at this run and pending: a late retry of this step, once the delivery was sent
   * again as a later run, changes nothing.
   */
  async function concludeWebhookDelivery(input: { deliveryId: string; run?: number; conclusion: DeliveryConclusion; disableEndpoint?: boolean }): Promise<void> {
    const em = deps.orm.em.fork();
    await em.transactional(async (tx) => {
      const delivery = await tx.findOne(WebhookDelivery, { id: input.deliveryId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!delivery) throw deliveryGone(input.deliveryId);
      if (delivery.redeliveries !== (input.run ?? 0) || delivery.state !== 'pending') return;
      delivery.state = input.conclusion;
      delivery.completedAt = new Date();
      if (input.disableEndpoint) {
        const disabled = await tx.nativeUpdate(
          WebhookEndpoint,
          { id: delivery.endpoint.id, disabledAt: null },
          { disabledAt: new Date(), disabledReason: ENDPOINT_GONE_REASON },
        );
        // Audited as a disable on request is: the receiver asked for it.
        if (disabled > 0) {
          await recordAuditEntry(tx, {
            tenantId: delivery.tenant.id,
            actor: 'receiver:410',
            action: 'webhook_endpoint.disabled',
            entityType: 'WebhookEndpoint',
            entityId: delivery.endpoint.id,
            changes: { reason: ENDPOINT_GONE_REASON, deliveryId: delivery.id },
          });
        }
      }
    });
  }

  /** Deliveries recorded at least `olderThanSeconds` ago and never attempted (see findUnstartedDeliveries). */
  async function listUnstartedDeliveries(input: { olderThanSeconds: number; limit: number }): Promise<UnstartedDelivery[]> {
    return findUnstartedDeliveries(deps.orm.em.fork(), { createdBefore: new Date(Date.now() - input.olderThanSeconds * 1000), limit: input.limit });
  }

  /**
   * The runs the sweep started, never listed again: each delivery at the run it was listed at (a sweep of before
   * names ids only: first runs), so a later run claimed meanwhile stays for the next sweep.
   */
  async function markDeliveriesSwept(input: { deliveryIds: string[]; runs?: number[] }): Promise<void> {
    await markSwept(deps.orm.em.fork(), input.deliveryIds.map((deliveryId, i) => ({ deliveryId, run: input.runs?.[i] ?? 0 })));
  }

  return withPermanentFailures({ attemptWebhookDelivery, concludeWebhookDelivery, listUnstartedDeliveries, markDeliveriesSwept });
}

/** Its tenant or endpoint was removed (the rows cascade): no retry will bring it back. */
function deliveryGone(deliveryId: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`Webhook delivery ${deliveryId} no longer exists`, 'DeliveryGone');
}

/**
 * Why a send failed, for the tenant reading its delivery's attempts: `fetch` says only "fetch failed", its cause says
 * what did (a refused connection, a name that did not resolve, a certificate it could not trust).
 */
function describeSendFailure(failure: unknown, timeoutMs: number): string {
  const reason = failure as Error & { cause?: { code?: unknown; message?: unknown } };
  if (reason.name === 'TimeoutError') return `Timed out after ${timeoutMs} ms`;
  const cause = reason.cause;
  const code = typeof cause?.code === 'string' ? `${cause.code}: ` : '';
  const detail = typeof cause?.message === 'string' && cause.message !== '' ? ` (${code}${cause.message})` : '';
  return `${reason.name}: ${reason.message}${detail}`;
}
