/**
 * What the payment workflow needs from a card processor. Each merchant account names a gateway
 * (`sandbox`, ...); an adapter implements this interface over that processor's HTTP API. Every call
 * returns the raw exchange so it can be shown in `gatewayResponses`.
 */
import type { RawExchange } from '../../domain/payments/attempts.ts';

export type { RawExchange };
export interface CardDetails {
  readonly number: string;
  readonly expiryMonth: number;
  readonly expiryYear: number;
  readonly cvv?: string;
  readonly holderName?: string;
}

export interface AuthorizationRequest {
  /** Unique per attempt; the processor deduplicates on it, and it is the key of a status inquiry. */
  readonly reference: string;
  /** Groups the attempts of one checkout (cascade). */
  readonly orderReference: string;
  readonly merchantId: string;
  readonly amount: string;
  readonly currency: string;
  readonly card: CardDetails;
  readonly threeDSecure: boolean;
  readonly credentials: Record<string, string>;
  /** False: authorize only (the amount is held until `capture` or `void`); default true. */
  readonly capture?: boolean;
  /**
   * A stored card charged without its holder present (a rebill): a merchant-initiated transaction, which card schemes
   * exempt from strong customer authentication (the holder authenticated at the checkout that stored it).
   */
  readonly merchantInitiated?: boolean;
}

export type AuthorizationOutcome =
  | { readonly kind: 'approved'; readonly statusId: number; readonly processorTransactionId: string; readonly authCode: string; readonly eci?: string }
  | { readonly kind: 'declined'; readonly statusId: number; readonly processorTransactionId?: string; readonly message: string }
  /** The cardholder must act in a browser: a 3-D Secure challenge, or (`redirect`) a page the processor requires. */
  | { readonly kind: 'challenge'; readonly processorTransactionId: string; readonly challengeUrl: string; readonly redirect?: boolean }
  /** No answer, or an answer that does not say what happened: ask with `inquire` before anything else. */
  | { readonly kind: 'unknown'; readonly reason: string };

export interface RefundRequest {
  /** Unique per refund; the processor deduplicates on it, and it is the key of a refund inquiry. */
  readonly reference: string;
  /** The processor's id of the approved authorization being refunded. */
  readonly processorTransactionId: string;
  /** Decimal string in the authorization's currency. */
  readonly amount: string;
}

export type RefundOutcome =
  | { readonly kind: 'refunded'; readonly statusId: number; readonly processorRefundId: string }
  | { readonly kind: 'declined'; readonly statusId: number; readonly message: string; readonly processorRefundId?: string }
  /** No answer, or one that does not say what happened: ask with `inquireRefund` before sending again. */
  | { readonly kind: 'unknown'; readonly reason: string };

/** `answered` false: no answer or an unreadable one (retry: a capture is idempotent); `captured` false: refused. */
export type CaptureOutcome = { readonly answered: true; readonly captured: boolean; readonly statusId: number } | { readonly answered: false; readonly reason: string };

export interface ProcessorResult<T> {
  readonly outcome: T;
  readonly exchange: RawExchange;
}

export interface ProcessorGateway {
  readonly name: string;
  authorize(request: AuthorizationRequest, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome>>;
  /** Status inquiry by attempt reference; `null` outcome when the processor never saw that reference. */
  inquire(reference: string, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome | null>>;
  /** Finishes a 3-D Secure challenge; `proceedWithoutAuthentication` authorizes without liability shift when authentication failed. */
  complete3ds(processorTransactionId: string, proceedWithoutAuthentication: boolean, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome>>;
  void(processorTransactionId: string, timeoutMs: number): Promise<ProcessorResult<{ readonly voided: boolean }>>;
  /** Captures an authorization made with `capture: false`; capturing twice captures once. */
  capture(processorTransactionId: string, timeoutMs: number): Promise<ProcessorResult<CaptureOutcome>>;
  /** Returns (part of) an approved authorization to the card. */
  refund(request: RefundRequest, timeoutMs: number): Promise<ProcessorResult<RefundOutcome>>;
  /** Refund inquiry by reference; `null` outcome when the processor never saw that reference. */
  inquireRefund(reference: string, timeoutMs: number): Promise<ProcessorResult<RefundOutcome | null>>;
}
