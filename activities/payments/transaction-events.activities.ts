import type { MikroORM } from '@mikro-orm/postgresql';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import type { TransactionEventData } from '../../domain/payments/payment-outcome.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

export function createTransactionEventActivities(deps: { orm: MikroORM }) {
  /** Records the `transaction.completed` deliveries; the workflow then starts one delivery workflow each. */
  async function recordTransactionEvent(input: { tenantId: number; occurredAt: string; data: TransactionEventData }): Promise<RecordedDelivery[]> {
    return recordWebhookDeliveries(deps.orm.em.fork(), {
      tenantId: input.tenantId,
      event: { type: 'transaction.completed', timestamp: input.occurredAt, data: input.data },
      // One payment completes once: a retried activity records the same deliveries under the same webhook-ids.
      eventKey: `transaction.completed/order-${input.data.submitOrderId}`,
    });
  }
  return withPermanentFailures({ recordTransactionEvent });
}
