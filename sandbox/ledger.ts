/**
 * The sandbox's memory of every authorization and refund it made. It lives in memory; the sandbox process saves it
 * to a file (`snapshot`, and `createLedger(saved)` at start), so a local stack restarted keeps the payments it made
 * refundable, capturable and voidable, as a processor would. Tests run it in memory only.
 */
import type { CardNetwork } from './test-cards.ts';

export interface SandboxStats {
  /** Authorizations actually processed (replays of a known reference and HTTP 500 answers do not count). */
  readonly totalAuthorizations: number;
  readonly byOrderReference: Readonly<Record<string, number>>;
  readonly byReference: Readonly<Record<string, number>>;
}

export type AnswerStatus = 'approved' | 'declined' | 'challenge_required' | 'voided';

/** The JSON answer of an authorization; what authorize, inquiry and 3ds-complete return. */
export interface Answer {
  id: string;
  reference: string;
  status: AnswerStatus;
  code: number;
  message: string;
  authCode?: string;
  eci?: string;
  challengeUrl?: string;
}

/** The answer of a refund; what the refund call and its inquiry return. */
export interface RefundAnswer {
  readonly id: string;
  readonly reference: string;
  readonly authorizationId: string;
  readonly status: 'refunded' | 'declined';
  readonly code: number;
  readonly message: string;
  readonly amount: string;
}

export interface Challenge {
  readonly authenticationFails: boolean;
  state: 'pending' | 'authenticated' | 'failed';
}

export interface Authorization {
  readonly id: string;
  readonly reference: string;
  readonly orderReference: string;
  readonly merchantId: string;
  readonly amount: string;
  readonly currency: string;
  readonly network: CardNetwork;
  /** The card's last four digits (absent in a ledger saved before they were kept): a reference reused with another card is refused. */
  readonly cardLastFour?: string;
  answer: Answer;
  /** Present for an authorization that asked the cardholder for a 3-D Secure challenge. */
  challenge?: Challenge;
  /** Present for an authorization only (`capture: false`): `pending` until captured; a captured one can no longer be voided. */
  capture?: 'pending' | 'captured';
}

export interface Ledger {
  byReference(reference: string): Authorization | undefined;
  byId(id: string): Authorization | undefined;
  /** The first merchant id that authorized for the order (the cascade card needs it); `merchantId` if the order is new. */
  firstMerchantOf(orderReference: string, merchantId: string): string;
  record(authorization: Authorization): void;
  refundByReference(reference: string): RefundAnswer | undefined;
  /** Cents refunded so far from an authorization (declined refunds do not count). */
  refundedCents(authorizationId: string): bigint;
  recordRefund(refund: RefundAnswer): void;
  stats(): SandboxStats;
  /** Everything the ledger holds, as JSON can keep it. */
  snapshot(): LedgerState;
}

/** A ledger as saved: plain JSON (cents as decimal strings). */
export interface LedgerState {
  readonly authorizations: readonly Authorization[];
  readonly firstMerchantByOrder: readonly (readonly [string, string])[];
  readonly countByOrder: readonly (readonly [string, number])[];
  readonly refunds: readonly RefundAnswer[];
  readonly refundedCents: readonly (readonly [string, string])[];
}

export function createLedger(saved?: LedgerState): Ledger {
  const byReference = new Map<string, Authorization>();
  const byId = new Map<string, Authorization>();
  const firstMerchantByOrder = new Map<string, string>(saved?.firstMerchantByOrder ?? []);
  const countByOrder = new Map<string, number>(saved?.countByOrder ?? []);
  const refunds = new Map<string, RefundAnswer>((saved?.refunds ?? []).map((refund) => [refund.reference, refund]));
  const refundedByAuthorization = new Map<string, bigint>((saved?.refundedCents ?? []).map(([id, cents]) => [id, BigInt(cents)]));
  // One object under both keys, as recorded: a capture or void changes what either finds.
  for (const authorization of saved?.authorizations ?? []) {
    byReference.set(authorization.reference, authorization);
    byId.set(authorization.id, authorization);
  }

  return {
    byReference: (reference) => byReference.get(reference),
    byId: (id) => byId.get(id),
    firstMerchantOf(orderReference, merchantId) {
      const first = firstMerchantByOrder.get(orderReference);
      if (first !== undefined) return first;
      firstMerchantByOrder.set(orderReference, merchantId);
      return merchantId;
    },
    record(authorization) {
      byReference.set(authorization.reference, authorization);
      byId.set(authorization.id, authorization);
      countByOrder.set(authorization.orderReference, (countByOrder.get(authorization.orderReference) ?? 0) + 1);
    },
    refundByReference: (reference) => refunds.get(reference),
    refundedCents: (authorizationId) => refundedByAuthorization.get(authorizationId) ?? 0n,
    recordRefund(refund) {
      refunds.set(refund.reference, refund);
      if (refund.status === 'refunded') {
        refundedByAuthorization.set(refund.authorizationId, (refundedByAuthorization.get(refund.authorizationId) ?? 0n) + BigInt(refund.amount.replace('.', '')));
      }
    },
    stats() {
      const references: Record<string, number> = {};
      for (const reference of byReference.keys()) references[reference] = 1;
      return {
        totalAuthorizations: byReference.size,
        byOrderReference: Object.fromEntries(countByOrder),
        byReference: references,
      };
    },
    snapshot: () => ({
      authorizations: [...byReference.values()],
      firstMerchantByOrder: [...firstMerchantByOrder],
      countByOrder: [...countByOrder],
      refunds: [...refunds.values()],
      refundedCents: [...refundedByAuthorization].map(([id, cents]) => [id, cents.toString()] as const),
    }),
  };
}
