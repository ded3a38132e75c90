import type { MikroORM } from '@mikro-orm/postgresql';
import type { RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import type { PaymentOutcome } from '../../domain/payments/payment-outcome.ts';
import { createPaidLeadMarker } from '../leads/lead-paid.activities.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';
import { createTransactionEventActivities } from './transaction-events.activities.ts';

/**
 * Records what a payment's outcome tells its tenant: the transaction webhook's deliveries and, for a charge, the paid
 * lead with its `customer_lead.paid` deliveries. The halves do not wait on each other's success; both are idempotent,
 * so when either fails a second recording runs both again and yields the same deliveries. `waitForLock: false` (the
 * payment's first step, before its answer): a lead row held by another transaction fails the recording at once
 * rather than holding the answer back, and the workflow records the outcome after its answer.
 */
export function createPaymentOutcomeRecorder(deps: { orm: MikroORM }) {
  const { recordTransactionEvent } = createTransactionEventActivities(deps);
  const markPaidLead = createPaidLeadMarker(deps);
  return async (input: PaymentOutcome, options: { waitForLock: boolean }): Promise<RecordedDelivery[]> => {
    const [transaction, lead] = await Promise.allSettled([
      recordTransactionEvent({ tenantId: input.tenantId, occurredAt: input.occurredAt, data: input.transaction }),
      input.paidLead ? markPaidLead(input.paidLead, options) : Promise.resolve([]),
    ]);
    if (transaction.status === 'rejected') throw transaction.reason;
    if (lead.status === 'rejected') throw lead.reason;
    return [...transaction.value, ...lead.value];
  };
}

/**
 * What a payment records after its answer when its first step did not (an older workflow, a later attempt, a lead row
 * that was held), as one activity: one workflow activation for the payment, not one per half.
 */
export function createPaymentOutcomeActivities(deps: { orm: MikroORM }) {
  const record = createPaymentOutcomeRecorder(deps);
  const recordPaymentOutcome = (input: PaymentOutcome) => record(input, { waitForLock: true });
  return withPermanentFailures({ recordPaymentOutcome });
}
