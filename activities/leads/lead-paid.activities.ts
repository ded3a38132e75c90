import type { MikroORM } from '@mikro-orm/postgresql';
import { markLeadPaid as markPaid } from '../../services/leads/mark-lead-paid.ts';
import type { RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import type { PaidLead } from '../../domain/payments/payment-outcome.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

/**
 * Marks the lead of a charged checkout session paid and records its `customer_lead.paid` deliveries (the workflow
 * starts them). `waitForLock: false`: a lead row another transaction holds fails the marking at once.
 */
export function createPaidLeadMarker(deps: { orm: MikroORM }) {
  return (input: PaidLead, options: { waitForLock: boolean } = { waitForLock: true }): Promise<RecordedDelivery[]> =>
    markPaid(
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
      options,
    );
}

export function createLeadActivities(deps: { orm: MikroORM }) {
  const markPaidLead = createPaidLeadMarker(deps);
  /** Marks the matching lead paid and records its `customer_lead.paid` deliveries; the workflow starts them. */
  const markLeadPaid = (input: PaidLead) => markPaidLead(input);
  return withPermanentFailures({ markLeadPaid });
}
