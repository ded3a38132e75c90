/**
 * Adapter for the sandbox card processor (`sandbox/processor-server.ts`) over its HTTP API.
 *
 * Every call is one HTTP exchange bounded by `AbortSignal.timeout(timeoutMs)`; the exchange's
 * `response` is the processor's body as kept (any card number it echoes masked, cut to its first
 * `KEPT_ANSWER_LENGTH` characters), or, when no answer came (timeout, connection refused or reset, a
 * body over `READ_ANSWER_BYTES`), `httpStatus: 0` and a description of the error.
 *
 * Mapping of answers to outcomes:
 *  - 200 `approved` / `declined` / `challenge_required` → approved / declined / challenge;
 *  - 200 `voided` (inquiry or 3DS completion after a void) → declined 4166 "Authorized then Voided/Cancelled";
 *  - no answer, 5xx, 409 `challenge_pending` or an unreadable body → unknown (ask with `inquire`);
 *  - authorize 400 (request refused, nothing authorized) → declined 4089 InputDataFormatError;
 *  - authorize 409 `reference_reused` (the reference was authorized before with another amount, card or merchant;
 *    nothing authorized now) → declined 3645 Duplicate transaction at processor, not unknown: an inquiry by that
 *    reference would answer the other payment's outcome;
 *  - 3DS completion 404 (processor does not know the transaction) → declined 4264 Transaction Not Found;
 *  - inquiry 404 → `null` (the processor never saw that reference);
 *  - refund 200 `refunded` / `declined` → refunded / declined; 404 or 409 (no such approval) → declined 4264
 *    Transaction Not Found / 4269 Not Eligible; no answer, 5xx or an unreadable body → unknown (ask with `inquireRefund`).
 */
import type {
  AuthorizationOutcome,
  AuthorizationRequest,
  CaptureOutcome,
  ProcessorGateway,
  ProcessorResult,
  RawExchange,
  RefundOutcome,
  RefundRequest,
} from './processor-gateway.ts';
import { PROCESSOR_ANSWER_LIMITS } from '../../domain/payments/attempts.ts';
import { maskCardEcho } from '../../domain/payments/card-echo.ts';
import { isHostileText, storableText } from '../../domain/validation/hostile-text.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';

export const SANDBOX_GATEWAY_NAME = 'sandbox';

/**
 * How much of an answer is kept (the transaction's record, the caller's `gatewayResponses`, the payment's history),
 * as webhook receivers' answers are: a processor's answer runs to a few hundred bytes, and a proxy's error page or a
 * debug dump of megabytes would otherwise go whole into a workflow history, which refuses payloads over 2 MB.
 */
const KEPT_ANSWER_LENGTH = 4096;
/** A longer body is not read to its end (nor held in memory): no answer to read an outcome from, as with no answer. */
const READ_ANSWER_BYTES = 8 * 1024 * 1024;

type Call =
  | { readonly answered: true; readonly exchange: RawExchange; readonly body: unknown }
  | { readonly answered: false; readonly exchange: RawExchange; readonly reason: string };

export function createSandboxAdapter(options: { baseUrl: string; name?: string }): ProcessorGateway {
  const name = options.name ?? SANDBOX_GATEWAY_NAME;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');

  async function call(method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<Call> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await bodyWithin(response, READ_ANSWER_BYTES);
      if (text === undefined) {
        const reason = `answer longer than ${READ_ANSWER_BYTES} bytes, not read (HTTP ${response.status})`;
        return { answered: false, exchange: { gateway: name, httpStatus: 0, response: reason }, reason };
      }
      // Read as sent (ids stay whole); kept and shown masked: a processor echoing the card must not store it.
      return { answered: true, exchange: { gateway: name, httpStatus: response.status, response: keptAnswer(maskCardEcho(text)) }, body: parseJson(text) };
    } catch (error) {
      const reason = describeFailure(error, timeoutMs);
      return { answered: false, exchange: { gateway: name, httpStatus: 0, response: reason }, reason };
    }
  }

  function unknown(reason: string): AuthorizationOutcome {
    return { kind: 'unknown', reason };
  }

  /** The outcome a 200 answer states, or unknown when it cannot be read. */
  function outcomeOf(call: Extract<Call, { answered: true }>): AuthorizationOutcome {
    return readAnswer(call.body) ?? unknown(`unreadable processor answer (HTTP ${call.exchange.httpStatus})`);
  }

  function unexpected(call: Extract<Call, { answered: true }>): AuthorizationOutcome {
    // Cut: the reason goes into the payment's history (as the kept answer does).
    const error = isRecord(call.body) && typeof call.body.error === 'string' ? `: ${storableText(maskCardEcho(call.body.error), 500)}` : '';
    return unknown(`processor answered HTTP ${call.exchange.httpStatus}${error}`);
  }

  return {
    name,

    async authorize(request: AuthorizationRequest, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome>> {
      const result = await call(
        'POST',
        '/v1/authorizations',
        {
          reference: request.reference,
          orderReference: request.orderReference,
          merchantId: request.merchantId,
          amount: request.amount,
          currency: request.currency,
          card: request.card,
          threeDSecure: request.threeDSecure,
          credentials: request.credentials,
          ...(request.capture === false ? { capture: false } : {}),
          ...(request.merchantInitiated ? { merchantInitiated: true } : {}),
        },
        timeoutMs,
      );
      if (!result.answered) return { outcome: unknown(result.reason), exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 200) return { outcome: outcomeOf(result), exchange: result.exchange };
      if (status === 400) {
        const message = isRecord(result.body) && typeof result.body.error === 'string' ? maskCardEcho(result.body.error) : 'request refused by the processor';
        return { outcome: { kind: 'declined', statusId: 4089, message: `InputDataFormatError: ${message}` }, exchange: result.exchange };
      }
      if (status === 409 && isRecord(result.body) && result.body.error === 'reference_reused') {
        return { outcome: { kind: 'declined', statusId: StatusId.DUPLICATE_AT_PROCESSOR, message: 'Duplicate transaction at processor: its reference was used before with other details' }, exchange: result.exchange };
      }
      return { outcome: unexpected(result), exchange: result.exchange };
    },

    async inquire(reference: string, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome | null>> {
      const result = await call('GET', `/v1/authorizations/${encodeURIComponent(reference)}`, undefined, timeoutMs);
      if (!result.answered) return { outcome: unknown(result.reason), exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 404) return { outcome: null, exchange: result.exchange };
      if (status === 200) return { outcome: outcomeOf(result), exchange: result.exchange };
      return { outcome: unexpected(result), exchange: result.exchange };
    },

    async complete3ds(processorTransactionId: string, proceedWithoutAuthentication: boolean, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome>> {
      const result = await call('POST', `/v1/authorizations/${encodeURIComponent(processorTransactionId)}/3ds-complete`, { proceedWithoutAuthentication }, timeoutMs);
      if (!result.answered) return { outcome: unknown(result.reason), exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 200) return { outcome: outcomeOf(result), exchange: result.exchange };
      if (status === 409 && isRecord(result.body) && result.body.status === 'challenge_pending') {
        return { outcome: unknown('challenge pending'), exchange: result.exchange };
      }
      if (status === 404) {
        return { outcome: { kind: 'declined', statusId: StatusId.TRANSACTION_NOT_FOUND, message: 'Transaction Not Found' }, exchange: result.exchange };
      }
      return { outcome: unexpected(result), exchange: result.exchange };
    },

    async void(processorTransactionId: string, timeoutMs: number): Promise<ProcessorResult<{ readonly voided: boolean }>> {
      const result = await call('POST', `/v1/authorizations/${encodeURIComponent(processorTransactionId)}/void`, undefined, timeoutMs);
      // No answer, 404 (unknown), 409 (a decline cannot be voided), 5xx: not voided (as far as we know).
      const voided = result.answered && result.exchange.httpStatus === 200 && isRecord(result.body) && result.body.status === 'voided';
      return { outcome: { voided }, exchange: result.exchange };
    },

    async capture(processorTransactionId: string, timeoutMs: number): Promise<ProcessorResult<CaptureOutcome>> {
      const result = await call('POST', `/v1/authorizations/${encodeURIComponent(processorTransactionId)}/capture`, undefined, timeoutMs);
      if (!result.answered) return { outcome: { answered: false, reason: result.reason }, exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 200 && isRecord(result.body) && result.body.status === 'captured') {
        return { outcome: { answered: true, captured: true, statusId: typeof result.body.code === 'number' ? result.body.code : 2636 }, exchange: result.exchange };
      }
      // 404 (unknown) or 409 (voided, declined): the processor refuses, and will refuse again.
      if (status === 404) return { outcome: { answered: true, captured: false, statusId: StatusId.TRANSACTION_NOT_FOUND }, exchange: result.exchange };
      if (status === 409) return { outcome: { answered: true, captured: false, statusId: StatusId.AUTHORIZATION_EXPIRED_OR_ALREADY_CAPTURED }, exchange: result.exchange };
      return { outcome: { answered: false, reason: `processor answered HTTP ${status}` }, exchange: result.exchange };
    },

    async refund(request: RefundRequest, timeoutMs: number): Promise<ProcessorResult<RefundOutcome>> {
      const result = await call(
        'POST',
        `/v1/authorizations/${encodeURIComponent(request.processorTransactionId)}/refunds`,
        { reference: request.reference, amount: request.amount },
        timeoutMs,
      );
      if (!result.answered) return { outcome: { kind: 'unknown', reason: result.reason }, exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 200) return { outcome: readRefundAnswer(result.body) ?? { kind: 'unknown', reason: 'unreadable processor answer (HTTP 200)' }, exchange: result.exchange };
      if (status === 404) return { outcome: { kind: 'declined', statusId: StatusId.TRANSACTION_NOT_FOUND, message: 'Transaction Not Found' }, exchange: result.exchange };
      if (status === 409) return { outcome: { kind: 'declined', statusId: 4269, message: 'Transaction Not Eligible for Settlement' }, exchange: result.exchange };
      return { outcome: { kind: 'unknown', reason: `processor answered HTTP ${status}` }, exchange: result.exchange };
    },

    async inquireRefund(reference: string, timeoutMs: number): Promise<ProcessorResult<RefundOutcome | null>> {
      const result = await call('GET', `/v1/refunds/${encodeURIComponent(reference)}`, undefined, timeoutMs);
      if (!result.answered) return { outcome: { kind: 'unknown', reason: result.reason }, exchange: result.exchange };
      const status = result.exchange.httpStatus;
      if (status === 404) return { outcome: null, exchange: result.exchange };
      if (status === 200) return { outcome: readRefundAnswer(result.body) ?? { kind: 'unknown', reason: 'unreadable processor answer (HTTP 200)' }, exchange: result.exchange };
      return { outcome: { kind: 'unknown', reason: `processor answered HTTP ${status}` }, exchange: result.exchange };
    },
  };
}

/** Reads a sandbox refund answer (`{id, status, code, message}`). */
function readRefundAnswer(body: unknown): RefundOutcome | undefined {
  if (!isRecord(body) || !isKeepableId(body.id) || typeof body.code !== 'number') return undefined;
  if (body.status === 'refunded') return { kind: 'refunded', statusId: body.code, processorRefundId: body.id };
  if (body.status === 'declined') return { kind: 'declined', statusId: body.code, message: typeof body.message === 'string' ? maskCardEcho(body.message) : '', processorRefundId: body.id };
  return undefined;
}

/** Reads a sandbox answer body (`{id, status, code, message, authCode?, eci?, challengeUrl?}`). */
function readAnswer(body: unknown): AuthorizationOutcome | undefined {
  if (!isRecord(body) || !isKeepableId(body.id) || typeof body.status !== 'string') return undefined;
  const id = body.id;
  const code = typeof body.code === 'number' ? body.code : undefined;
  const message = typeof body.message === 'string' ? maskCardEcho(body.message) : '';
  switch (body.status) {
    case 'approved':
      if (code === undefined || typeof body.authCode !== 'string') return undefined;
      return {
        kind: 'approved',
        statusId: code,
        processorTransactionId: id,
        // Issuers' codes are six characters; one beyond the column is kept cut (whole in the exchange kept beside it).
        authCode: storableText(body.authCode, PROCESSOR_ANSWER_LIMITS.authCode),
        ...(typeof body.eci === 'string' && ECI.test(body.eci) ? { eci: body.eci } : {}),
      };
    case 'declined':
      if (code === undefined) return undefined;
      return { kind: 'declined', statusId: code, processorTransactionId: id, message };
    case 'voided':
      return { kind: 'declined', statusId: code ?? StatusId.VOIDED, processorTransactionId: id, message: message || 'Authorized then Voided/Cancelled' };
    case 'challenge_required':
      if (typeof body.challengeUrl !== 'string' || body.challengeUrl.length > PROCESSOR_ANSWER_LIMITS.challengeUrl) return undefined;
      return { kind: 'challenge', processorTransactionId: id, challengeUrl: body.challengeUrl, ...(body.redirect === true ? { redirect: true } : {}) };
    default:
      return undefined;
  }
}

/** An Electronic Commerce Indicator: two digits. */
const ECI = /^\d{2}$/;

/** A processor id the gateway can keep, and so void, capture or refund by later. */
function isKeepableId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= PROCESSOR_ANSWER_LIMITS.transactionId && !isHostileText(id);
}

/** The body as text, or undefined when it is longer than `limit` bytes (the rest is then not read). */
async function bodyWithin(response: Response, limit: number): Promise<string | undefined> {
  if (Number(response.headers.get('content-length')) > limit) {
    await response.body?.cancel();
    return undefined;
  }
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  for (let size = 0; ; ) {
    const { done, value } = await reader.read();
    if (done) return new TextDecoder().decode(Buffer.concat(chunks));
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
}

/** An answer as kept: its first `KEPT_ANSWER_LENGTH` characters, saying how much more there was. */
function keptAnswer(text: string): string {
  if (text.length <= KEPT_ANSWER_LENGTH) return text;
  return `${storableText(text, KEPT_ANSWER_LENGTH)}… (${text.length - KEPT_ANSWER_LENGTH} more characters not kept)`;
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${timeoutMs} ms (timeout)`;
    if (error.name === 'AbortError') return 'request aborted';
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return `connection error: ${typeof code === 'string' ? `${code} ` : ''}(${cause.message})`;
    }
    return `connection error: ${error.message}`;
  }
  return 'connection error';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
