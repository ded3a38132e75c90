import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { AuthorizationOutcome, ProcessorGateway, ProcessorResult } from '../../adapters/processors/processor-gateway.ts';
import { recordVoid } from '../../data/queries/authorization-holds.ts';
import { approveOrderFoundCharged } from '../../data/queries/orders.ts';
import { findRebillOrder } from '../../data/queries/rebills.ts';
import { listOrderAuthorizations, recordLateAnswer, type OrderAuthorization } from '../../data/queries/transactions.ts';
import type { Logger } from '../../domain/logger.ts';
import { attemptReference, MAX_ATTEMPTS_PER_ORDER } from '../../domain/payments/attempts.ts';
import { statusNameOf } from '../../domain/statuses/status-codes.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';
import { uncertainChargeVerdict, type AttemptAtProcessor } from '../../domain/subscriptions/uncertain-charge.ts';
import { recordWebhookDeliveries, type RecordedDelivery } from '../../services/webhooks/dispatch.ts';
import { withPermanentFailures } from '../shared/permanent-failures.ts';

export interface UncertainRebillActivityDeps {
  readonly orm: MikroORM;
  readonly logger: Logger;
  readonly processors: { get(name: string): ProcessorGateway; names(): string[] };
}

/** What asking the processor about a rebill whose charge was uncertain found, and recorded. */
export type UncertainRebillFinding =
  /** An approval of the rebill's order stands, now recorded as the order's charge: it pays the period. */
  | {
      readonly kind: 'charged';
      readonly orderId: number;
      /** The processor's id of the approval (what a rebill's `transactionId` names). */
      readonly processorTransactionId: string;
      readonly statusId: number;
      readonly amount: string;
      readonly currency: string;
      /** The order's `transaction.updated` (`change: "approved"`), recorded; the workflow starts them. */
      readonly deliveries: RecordedDelivery[];
    }
  /** Nothing of the order charged the card (declined, voided, never seen, or never opened): charge the period anew. */
  | { readonly kind: 'not_charged'; readonly orderId?: number }
  /** Still not known (or an approval no transaction records): billing pauses again. */
  | { readonly kind: 'unknown'; readonly orderId: number; readonly reason: string };

/**
 * Resolves a rebill whose charge was left uncertain, before its period is charged again: the processor is asked about
 * every attempt of its order, and what it says is recorded (a late approval on its transaction, counted in its merchant
 * account's volume, the order approved and a `transaction.updated` told; a late decline or a void on the attempt).
 * Asking is a read and recording keeps the first final word, so running it again changes nothing twice.
 */
export function createUncertainRebillActivities(deps: UncertainRebillActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  async function settleUncertainRebill(input: { tenantId: number; subscriptionId: number; period: number; attempt: number; timeoutMs: number }): Promise<UncertainRebillFinding> {
    const order = await findRebillOrder(fork(), input);
    // Never opened: its payment sent nothing.
    if (!order) return { kind: 'not_charged' };
    const recorded = await listOrderAuthorizations(fork(), order.orderId);
    const references = new Set([...Array.from({ length: MAX_ATTEMPTS_PER_ORDER }, (_, i) => attemptReference(order.orderId, i + 1)), ...recorded.map((r) => r.reference)]);
    // Asked at once (an activity's time is bounded by one processor call), then recorded one by one.
    const asked = await Promise.all(
      [...references].map(async (reference) => {
        const attempt = recorded.find((r) => r.reference === reference);
        if (attempt && settledByRecord(attempt)) return { reference, attempt, answers: undefined };
        const gateways = attempt ? [attempt.gateway] : deps.processors.names();
        return { reference, attempt, answers: await Promise.all(gateways.map((gateway) => inquire(gateway, reference, input.timeoutMs))) };
      }),
    );
    const found: AttemptAtProcessor[] = [];
    let charge: { processorTransactionId: string; statusId: number } | undefined;
    for (const { reference, attempt, answers } of asked) {
      const answer = answers ? await recordAnswer(order.orderId, reference, attempt, answers) : { found: { kind: 'not_charged' } as const };
      found.push(answer.found);
      if ('charge' in answer && answer.charge && !charge) charge = answer.charge;
    }
    const verdict = uncertainChargeVerdict(found);
    deps.logger.info({ subscriptionId: input.subscriptionId, orderId: order.orderId, verdict: verdict.kind }, 'uncertain rebill asked about');
    if (verdict.kind === 'unknown') return { kind: 'unknown', orderId: order.orderId, reason: verdict.reason };
    if (verdict.kind === 'not_charged' || !charge) return { kind: 'not_charged', orderId: order.orderId };
    const amount = order.amount ?? '0.00';
    const currency = order.currency ?? '';
    const deliveries = await recordWebhookDeliveries(fork(), {
      tenantId: input.tenantId,
      event: {
        type: 'transaction.updated',
        timestamp: new Date().toISOString(),
        data: { paymentId: `pay_${order.orderId}`, submitOrderId: order.orderId, orderId: order.orderId, subscriptionId: input.subscriptionId, change: 'approved', statusId: charge.statusId, amount, currency },
      },
      eventKey: `transaction.updated/order-${order.orderId}/approved`,
    });
    return { kind: 'charged', orderId: order.orderId, processorTransactionId: charge.processorTransactionId, statusId: charge.statusId, amount, currency, deliveries };
  }

  /**
   * What the processor said of one attempt, recorded. An attempt the database never recorded was asked of every
   * processor this deployment has (its account is not known), and nothing of it can be recorded.
   */
  async function recordAnswer(
    orderId: number,
    reference: string,
    attempt: OrderAuthorization | undefined,
    answers: ProcessorResult<AuthorizationOutcome | null>[],
  ): Promise<{ found: AttemptAtProcessor; charge?: { processorTransactionId: string; statusId: number } }> {
    if (!attempt) {
      const approved = answers.find((a) => a.outcome?.kind === 'approved');
      if (approved) deps.logger.error({ orderId, reference, gateway: approved.exchange.gateway }, 'an uncertain rebill was approved at the processor but never recorded here: an operator records it');
      if (approved) return { found: { kind: 'approved', recorded: false } };
      const unanswered = answers.find((a) => a.outcome !== null && a.outcome.kind !== 'declined');
      return { found: unanswered ? { kind: 'unanswered', reason: reasonOf(unanswered) } : { kind: 'not_charged' } };
    }
    const [answer] = answers as [ProcessorResult<AuthorizationOutcome | null>];
    const outcome = answer.outcome;
    if (outcome?.kind === 'approved') {
      await fork().transactional(async (tx) => {
        if (!attempt.approved) {
          const status = statusNameOf(outcome.statusId);
          await recordLateAnswer(tx, { reference, processorTransactionId: outcome.processorTransactionId, statusId: outcome.statusId, status, approved: true, authCode: outcome.authCode, eci: outcome.eci ?? null, exchange: answer.exchange });
        }
        await approveOrderFoundCharged(tx, orderId);
      });
      deps.logger.warn({ orderId, reference }, 'an uncertain rebill was approved at the processor: recorded as its charge');
      return { found: { kind: 'approved', recorded: true }, charge: { processorTransactionId: outcome.processorTransactionId, statusId: outcome.statusId } };
    }
    if (outcome?.kind === 'declined') {
      await fork().transactional(async (tx) => {
        // The approval recorded here was voided at the processor (the payment's void went unanswered): nothing charged.
        if (attempt.approved) await recordVoid(tx, { orderId, transactionId: attempt.transactionId, voided: true, statusId: StatusId.VOIDED, status: statusNameOf(StatusId.VOIDED), exchange: answer.exchange });
        else await recordLateAnswer(tx, { reference, processorTransactionId: outcome.processorTransactionId ?? null, statusId: outcome.statusId, status: statusNameOf(outcome.statusId), approved: false, authCode: null, eci: null, exchange: answer.exchange });
      });
      return { found: { kind: 'not_charged' } };
    }
    if (outcome === null) {
      // An approval recorded here that the processor does not know: a contradiction nobody should guess past.
      if (attempt.approved) return { found: { kind: 'unanswered', reason: `the processor does not know ${reference}, recorded here as approved` } };
      // Never seen: recorded as the payment records it (a timeout, completed), so its record no longer looks open.
      const timeout = StatusId.SYSTEM_TIMEOUT;
      await recordLateAnswer(fork(), { reference, processorTransactionId: null, statusId: timeout, status: statusNameOf(timeout), approved: false, authCode: null, eci: null, exchange: answer.exchange });
      return { found: { kind: 'not_charged' } };
    }
    return { found: { kind: 'unanswered', reason: reasonOf(answer) } };
  }

  /** The processor's final word is recorded on the attempt: a decline, or an approval it voided. */
  function settledByRecord(attempt: OrderAuthorization): boolean {
    if (attempt.approved) return attempt.voided;
    return attempt.completedAt !== null && attempt.statusId !== StatusId.SYSTEM_TIMEOUT;
  }

  async function inquire(gateway: string, reference: string, timeoutMs: number): Promise<ProcessorResult<AuthorizationOutcome | null>> {
    if (!deps.processors.names().includes(gateway)) {
      return { outcome: { kind: 'unknown', reason: `no adapter is configured for gateway "${gateway}"` }, exchange: { gateway, httpStatus: 0, response: '' } };
    }
    return deps.processors.get(gateway).inquire(reference, timeoutMs);
  }

  return withPermanentFailures({ settleUncertainRebill });
}

/** Why an answer settles nothing: no answer, a refusal, or an open challenge. */
function reasonOf(answer: ProcessorResult<AuthorizationOutcome | null>): string {
  const outcome = answer.outcome;
  if (outcome?.kind === 'unknown') return `the processor's inquiry failed: ${outcome.reason}`;
  return `the processor answered ${outcome?.kind ?? 'nothing'} (HTTP ${answer.exchange.httpStatus})`;
}
