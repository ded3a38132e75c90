import { ApplicationFailure } from '@temporalio/common';
import type { RawExchange } from '../../domain/payments/attempts.ts';

/**
 * SQLSTATE classes no retry can fix: the statement is wrong for this data, not the database unwell.
 * 22 data exception (22021 bytes invalid in UTF-8, 22P05 a NUL escaped in JSON, 22001 text too long),
 * 23 integrity constraint violation, 42 syntax or access rule (a bug). Anything else (08 connection,
 * 40 serialization or deadlock, 53 resources, 57 shutdown) may pass on its own and is retried within the
 * activity's bound.
 */
const PERMANENT_SQLSTATE_CLASSES = new Set(['22', '23', '42']);
/** 08P01 "invalid message format": what a NUL byte in a text parameter gets (it ends the string in the wire protocol). */
const PERMANENT_SQLSTATES = new Set(['08P01']);

/** The SQLSTATE of a PostgreSQL error (MikroORM copies the driver's `code` onto its exception). */
function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * A failure retrying cannot fix, as a non-retryable ApplicationFailure, so the workflow learns at once
 * instead of after every attempt; any other error is returned unchanged (retried). The message names the
 * SQLSTATE and constraint only: PostgreSQL's own text can quote the refused value into Temporal history.
 */
export function permanentFailureOf(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  const code = sqlState(error);
  if (code === undefined || !(PERMANENT_SQLSTATES.has(code) || PERMANENT_SQLSTATE_CLASSES.has(code.slice(0, 2)))) return error;
  const constraint = (error as { constraint?: unknown }).constraint;
  const on = typeof constraint === 'string' ? ` (constraint ${constraint})` : '';
  return ApplicationFailure.nonRetryable(`PostgreSQL refused the statement: SQLSTATE ${code}${on}`, 'DatabaseRefused', { sqlState: code });
}

/**
 * A processor exchange that did not settle the call. A 4xx answer is the processor refusing this request,
 * which it will refuse again (408 and 429 excepted: they ask for a later retry); no answer or a 5xx may pass.
 */
export function processorFailure(message: string, exchange: RawExchange): Error {
  const status = exchange.httpStatus;
  const refused = status >= 400 && status < 500 && status !== 408 && status !== 429;
  return refused ? ApplicationFailure.nonRetryable(message, 'ProcessorRefused', { httpStatus: status }) : new Error(message);
}

/** The activities, each throwing a permanent failure as non-retryable (see `permanentFailureOf`). */
export function withPermanentFailures<T extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, activity] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await activity(...args);
      } catch (error) {
        throw permanentFailureOf(error);
      }
    };
  }
  return wrapped as T;
}
