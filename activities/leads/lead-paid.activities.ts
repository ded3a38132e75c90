import type { MikroORM } from '@mikro-orm/postgresql';
import { markLeadPaid as markPaid } from '../../services/leads/mark-lead-paid.ts';
import type { RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

/** A successful charge, as the payment workflow knows it, to mark the lead of its session paid. */
export interface LeadPaidInput {
  readonly tenantId: number;
  readonly productId: number;
  readonly merchantAccountId: number;
  /** The checkout's `partnerSession` (the lead's `session_id`). */
  readonly sessionId: string;
  readonly transactionId: string;
  readonly orderId: number;
  /** Exact decimal string. */
  readonly amount: string;
  readonly currency: string;
  /** 0 when the payment started no subscription. */
  readonly subscriptionId: number;
  /** ISO 8601. */
  readonly paidAt: string;
}

export function createLeadActivities(deps: { orm: MikroORM }) {
  /** Marks the matching lead paid and records its `customer_lead.paid` deliveries; the workflow starts them. */
  async function markLeadPaid(input: LeadPaidInput): Promise<RecordedDelivery[]> {
    return markPaid(
      deps.orm.em.fork(),
      { tenantId: input.tenantId, productId: input.productId, merchantAccountId: input.merchantAccountId, sessionId: input.sessionId },
      {
        transactionId: input.transactionId,
        orderId: input.orderId,
        amount: input.amount,
        currency: input.currency,
        subscriptionId: input.subscriptionId > 0 ? input.subscriptionId : null,
        paidAt: new Date(input.paidAt),
      },
    );
  }
  return withPermanentFailures({ markLeadPaid });
}
