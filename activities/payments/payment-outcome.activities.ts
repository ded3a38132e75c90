import type { MikroORM } from '@mikro-orm/postgresql';
import type { RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { createLeadActivities, type LeadPaidInput } from '../leads/lead-paid.activities.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';
import { createTransactionEventActivities, type TransactionEventData } from './transaction-events.activities.ts';

export interface PaymentOutcomeInput {
  readonly tenantId: number;
  /** ISO 8601. */
  readonly occurredAt: string;
  /** The `transaction.completed` webhook's data. */
  readonly transaction: TransactionEventData;
  /** A successful charge of a checkout session: its lead becomes paid. */
  readonly paidLead?: LeadPaidInput;
}

/**
 * What a payment records after its answer, as one activity (one workflow activation for the payment, not one
 * per step): the transaction webhook's deliveries and, for a charge, the paid lead with its
 * `customer_lead.paid` deliveries. The halves do not wait on each other's success; both are idempotent, so when
 * either fails the retry runs both again.
 */
export function createPaymentOutcomeActivities(deps: { orm: MikroORM }) {
  const { recordTransactionEvent } = createTransactionEventActivities(deps);
  const { markLeadPaid } = createLeadActivities(deps);

  async function recordPaymentOutcome(input: PaymentOutcomeInput): Promise<RecordedDelivery[]> {
    const [transaction, lead] = await Promise.allSettled([
      recordTransactionEvent({ tenantId: input.tenantId, occurredAt: input.occurredAt, data: input.transaction }),
      input.paidLead ? markLeadPaid(input.paidLead) : Promise.resolve([]),
    ]);
    if (transaction.status === 'rejected') throw transaction.reason;
    if (lead.status === 'rejected') throw lead.reason;
    return [...transaction.value, ...lead.value];
  }
  return withPermanentFailures({ recordPaymentOutcome });
}
