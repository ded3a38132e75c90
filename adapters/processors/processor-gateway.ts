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
}

export type AuthorizationOutcome =
  | { readonly kind: 'approved'; readonly statusId: number; readonly processorTransactionId: string; readonly authCode: string; readonly eci?: string }
  | { readonly kind: 'declined'; readonly statusId: number; readonly processorTransactionId?: string; readonly message: string }
  /** The cardholder must act in a browser: a 3-D Secure challenge, or (`redirect`) a page the processor requires. */
  | { readonly kind: 'challenge'; readonly processorTransactionId: string; readonly challengeUrl: string; readonly redirect?: boolean }
  /** No answer, or an answer that does not say what happened: ask with `inquire` before anything else. */
  | { readonly kind: 'unknown'; readonly reason: string };

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
}
