import type { RawExchange } from '../payments/attempts.ts';

/** One refund call (or inquiry) as the refund workflow sees it; `unknown` must be resolved by an inquiry first. */
export type RefundCallOutcome =
  | { readonly kind: 'refunded'; readonly statusId: number; readonly processorRefundId: string }
  | { readonly kind: 'declined'; readonly statusId: number; readonly message: string; readonly processorRefundId?: string }
  | { readonly kind: 'unknown'; readonly reason: string }
  /** Inquiry only: the processor never saw the refund, so sending it again cannot refund twice. */
  | { readonly kind: 'not_found' };

/**
 * The failure type of a refund that cannot be sent at all: no original with a processor id, or its processor is
 * no longer configured. Thrown before any call, so the refund workflow knows that attempt reached no processor.
 */
export const REFUND_NOT_SENDABLE = 'RefundNotSendable';

export interface RefundCall {
  readonly outcome: RefundCallOutcome;
  readonly exchange: RawExchange;
}

/**
 * What the refund workflow ends with (also the answer `POST /payments/{id}/refund` waits for): settled, still
 * `pending` (its processor answer could not be learnt: marked for review, amount held), or `withdrawn` (the request
 * that opened it could not start the workflow and undid it first: nothing was sent).
 */
export interface RefundSettlement {
  readonly refundId: string;
  readonly state: 'succeeded' | 'failed' | 'pending' | 'withdrawn';
  readonly statusId: number | null;
}

export interface RefundWorkflowInput {
  readonly tenantId: number;
  readonly refundId: string;
  readonly processorTimeoutMs: number;
  readonly webhookSchedule: readonly number[];
  readonly webhookTimeoutMs: number;
}

/** Runs a refund durably (port; the Temporal adapter starts the refund workflow and waits for it, bounded). */
export interface RefundRunner {
  /** The settlement, or undefined when it did not finish within the caller's wait (the refund goes on). */
  run(input: RefundWorkflowInput): Promise<RefundSettlement | undefined>;
}
