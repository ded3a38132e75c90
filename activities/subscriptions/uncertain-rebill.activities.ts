import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { AuthorizationOutcome, ProcessorGateway, ProcessorResult } from '../../adapters/processors/processor-gateway.ts';
import { recordVoid } from '../../data/queries/authorization-holds.ts';
import { listTenantGateways } from '../../data/queries/merchant-accounts.ts';
import { approveOrderFoundCharged } from '../../data/queries/orders.ts';
import { closeUnchargedRebill, findRebillOrder, findRebillSubject } from '../../data/queries/rebills.ts';
import { findRecordedAttempt, listOrderAuthorizations, recordLateAnswer, type OrderAuthorization } from '../../data/queries/transactions.ts';
import type { Logger } from '../../domain/logger.ts';
import { attemptReference, MAX_ATTEMPTS_PER_ORDER, storableExchange } from '../../domain/payments/attempts.ts';
import { statusNameOf } from '../../domain/statuses/status-codes.ts';
import { StatusId } from '../../domain/statuses/status-ids.ts';
import { uncertainChargeVerdict, type AttemptAtProcessor } from '../../domain/subscriptions/uncertain-charge.ts';
import { markLeadPaid } from '../../services/leads/mark-lead-paid.ts';
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
      /**
       * The order's `transaction.updated` (`change: "approved"`) and, for a salvaged checkout's retry, its lead's
       * `customer_lead.paid`, recorded; the workflow starts them.
       */
      readonly deliveries: RecordedDelivery[];
    }
  /** Nothing of the order charged the card (declined, voided or never seen): charge the period anew. */
  | { readonly kind: 'not_charged'; readonly orderId: number }
  /** Still not known (or an approval no transaction records): billing pauses again. */
  | { readonly kind: 'unknown'; readonly orderId?: number; readonly reason: string };

type Answer = ProcessorResult<AuthorizationOutcome | null>;
/** What one attempt turned out to be, and the approval when it charged. */
type Settled = {
  readonly found: AttemptAtProcessor;
  readonly charge?: { readonly processorTransactionId: string; readonly statusId: number; readonly merchantAccountId: number | null };
};

const NOT_CHARGED: Settled = { found: { kind: 'not_charged' } };
const unanswered = (reason: string): Settled => ({ found: { kind: 'unanswered', reason } });

/**
 * Resolves a rebill whose charge was left uncertain, before its period is charged again: the processor is asked about
 * every attempt of its order, and what it says is recorded (a late approval on its transaction, counted in its merchant
 * account's volume, the order approved and a `transaction.updated` told; a late decline, or a void, on the attempt).
 * Asking is a read and recording keeps the first final word, so running it again changes nothing twice.
 */
export function createUncertainRebillActivities(deps: UncertainRebillActivityDeps) {
  const fork = (): EntityManager => deps.orm.em.fork() as EntityManager;

  async function settleUncertainRebill(input: { tenantId: number; subscriptionId: number; period: number; attempt: number; timeoutMs: number }): Promise<UncertainRebillFinding> {
    const order = await findRebillOrder(fork(), input);
    // Billing paused on this try, so its row was opened: without it, nothing says what was sent.
    if (!order) return { kind: 'unknown', reason: `no order of period ${input.period}, attempt ${input.attempt} is recorded` };
    const recorded = await listOrderAuthorizations(fork(), order.orderId);
    // An attempt the database never recorded may have gone to any processor the tenant's accounts name.
    const tenantGateways = await listTenantGateways(fork(), input.tenantId);
    const references = new Set([...Array.from({ length: MAX_ATTEMPTS_PER_ORDER }, (_, i) => attemptReference(order.orderId, i + 1)), ...recorded.map((r) => r.reference)]);
    // Asked at once (the step's time is bounded by one processor call), then recorded one by one.
    const asked = await Promise.all(
      [...references].map(async (reference) => {
        const attempt = recorded.find((r) => r.reference === reference);
        if (attempt && settledByRecord(attempt)) return { reference, attempt, answers: undefined };
        const gateways = attempt ? [attempt.gateway] : tenantGateways;
        return { reference, attempt, answers: await Promise.all(gateways.map((gateway) => inquire(gateway, reference, input.timeoutMs))) };
      }),
    );
    const found: AttemptAtProcessor[] = [];
    let charge: Settled['charge'];
    for (const { reference, attempt, answers } of asked) {
      const settled = answers === undefined ? NOT_CHARGED : attempt ? await recordAnswer(order.orderId, attempt, answers[0]!) : unrecordedAttempt(order.orderId, reference, answers);
      found.push(settled.found);
      charge ??= settled.charge;
    }
    const verdict = uncertainChargeVerdict(found);
    deps.logger.info({ subscriptionId: input.subscriptionId, orderId: order.orderId, verdict: verdict.kind }, 'uncertain rebill asked about');
    if (verdict.kind === 'unknown') return { kind: 'unknown', orderId: order.orderId, reason: verdict.reason };
    if (verdict.kind === 'not_charged' || !charge) {
      // The period is charged anew under a new try: this one is closed as what it was, not left looking in flight.
      await closeUnchargedRebill(fork(), input);
      return { kind: 'not_charged', orderId: order.orderId };
    }
    // An attempt was recorded, so its order was opened: its amount and currency are known.
    const amount = order.amount!;
    const currency = order.currency!;
    const updated = await recordWebhookDeliveries(fork(), {
      tenantId: input.tenantId,
      event: {
        type: 'transaction.updated',
        timestamp: new Date().toISOString(),
        data: { paymentId: `pay_${order.orderId}`, submitOrderId: order.orderId, orderId: order.orderId, subscriptionId: input.subscriptionId, change: 'approved', statusId: charge.statusId, amount, currency },
      },
      eventKey: `transaction.updated/order-${order.orderId}/approved`,
    });
    // Best effort, as a payment's own marking: the period is paid whatever becomes of the lead (a later write of the
    // lead, or an operator, finds the payment), so a failing lead never holds back the renewal or asks again.
    const leadDeliveries = await markCheckoutLeadPaid({ ...input, orderId: order.orderId, amount, currency, charge }).catch((error: unknown) => {
      deps.logger.error({ subscriptionId: input.subscriptionId, orderId: order.orderId, err: error }, "the salvaged checkout's lead was not marked paid");
      return [];
    });
    const deliveries = [...updated, ...leadDeliveries];
    return { kind: 'charged', orderId: order.orderId, processorTransactionId: charge.processorTransactionId, statusId: charge.statusId, amount, currency, deliveries };
  }

  /**
   * Period 0 is a salvaged checkout's own charge retried: found charged, it pays the checkout's lead, as the retry's
   * payment would have had it answered (the lead names the subscription, and the first payment of its session wins).
   */
  async function markCheckoutLeadPaid(paid: { tenantId: number; subscriptionId: number; period: number; orderId: number; amount: string; currency: string; charge: NonNullable<Settled['charge']> }): Promise<RecordedDelivery[]> {
    if (paid.period !== 0) return [];
    const subject = await findRebillSubject(fork(), paid.subscriptionId);
    if (!subject?.checkoutPartnerSession) return [];
    // An approval recorded before its merchant account was deleted: the lead's environment cannot be told.
    if (paid.charge.merchantAccountId === null) {
      deps.logger.warn({ subscriptionId: paid.subscriptionId, orderId: paid.orderId }, "a salvaged checkout's retry was found charged on a deleted merchant account: its lead is not marked paid");
      return [];
    }
    return markLeadPaid(
      fork(),
      { tenantId: paid.tenantId, productId: subject.productId, merchantAccountId: paid.charge.merchantAccountId, sessionId: subject.checkoutPartnerSession },
      { transactionId: paid.charge.processorTransactionId, orderId: paid.orderId, amount: paid.amount, currency: paid.currency, subscriptionId: paid.subscriptionId, paidAt: new Date() },
    );
  }

  /**
   * An attempt the database never recorded, asked of every processor the tenant's accounts name: nothing of it can be
   * recorded (an answer names no merchant account), so an approval found stays for an operator.
   */
  function unrecordedAttempt(orderId: number, reference: string, answers: Answer[]): Settled {
    const approved = answers.find((a) => a.outcome?.kind === 'approved');
    if (approved) {
      deps.logger.error({ orderId, reference, gateway: approved.exchange.gateway }, 'an uncertain rebill was approved at the processor but never recorded here: an operator records it');
      return { found: { kind: 'approved', recorded: false } };
    }
    if (answers.length === 0) return unanswered('no processor to ask: the tenant has no merchant account');
    const open = answers.find((a) => a.outcome !== null && a.outcome.kind !== 'declined');
    return open ? unanswered(reasonOf(open)) : NOT_CHARGED;
  }

  /** What the processor said of an attempt recorded here, recorded on it. */
  async function recordAnswer(orderId: number, attempt: OrderAuthorization, answer: Answer): Promise<Settled> {
    const outcome = answer.outcome;
    const exchange = storableExchange(answer.exchange);
    const { reference } = attempt;
    if (outcome?.kind === 'approved') {
      // Counted in its account's volume when recorded: an account deleted since cannot take it.
      if (!attempt.approved && attempt.merchantAccountId === null) return unanswered(`${reference} was approved, but its merchant account no longer exists`);
      const recordedApproved = await fork().transactional(async (tx) => {
        if (!attempt.approved) {
          const late = await recordLateAnswer(tx, { reference, processorTransactionId: outcome.processorTransactionId, statusId: outcome.statusId, status: statusNameOf(outcome.statusId), approved: true, authCode: outcome.authCode, eci: outcome.eci ?? null, exchange });
          // Another final word was recorded meanwhile: the record says which.
          if (!late || (late.alreadySettled && !(await findRecordedAttempt(tx, reference))?.approved)) return false;
        }
        await approveOrderFoundCharged(tx, orderId);
        return true;
      });
      if (!recordedApproved) return unanswered(`${reference} was approved at the processor, but its record says otherwise`);
      deps.logger.warn({ orderId, reference }, 'an uncertain rebill was approved at the processor: recorded as its charge');
      return { found: { kind: 'approved', recorded: true }, charge: { processorTransactionId: outcome.processorTransactionId, statusId: outcome.statusId, merchantAccountId: attempt.merchantAccountId } };
    }
    if (outcome?.kind === 'declined') {
      if (attempt.approved) {
        // An approval recorded here that the processor now declines: voided (the payment's void went unanswered) is
        // nothing charged; any other decline contradicts the record, and nobody should guess past it.
        if (outcome.statusId !== StatusId.VOIDED) return unanswered(`the processor declines ${reference} (${outcome.statusId}), recorded here as approved`);
        await fork().transactional((tx) => recordVoid(tx, { orderId, transactionId: attempt.transactionId, voided: true, statusId: StatusId.VOIDED, status: statusNameOf(StatusId.VOIDED), exchange }));
        return NOT_CHARGED;
      }
      await recordLateAnswer(fork(), { reference, processorTransactionId: outcome.processorTransactionId ?? null, statusId: outcome.statusId, status: statusNameOf(outcome.statusId), approved: false, authCode: null, eci: null, exchange });
      return NOT_CHARGED;
    }
    if (outcome === null) {
      if (attempt.approved) return unanswered(`the processor does not know ${reference}, recorded here as approved`);
      // Never seen: recorded as the payment records it (a timeout, completed), so its record no longer looks open.
      const timeout = StatusId.SYSTEM_TIMEOUT;
      await recordLateAnswer(fork(), { reference, processorTransactionId: null, statusId: timeout, status: statusNameOf(timeout), approved: false, authCode: null, eci: null, exchange });
      return NOT_CHARGED;
    }
    return unanswered(reasonOf(answer));
  }

  /** The processor's final word is recorded on the attempt: a decline, or an approval it voided. */
  function settledByRecord(attempt: OrderAuthorization): boolean {
    if (attempt.approved) return attempt.voided;
    return attempt.completedAt !== null && attempt.statusId !== StatusId.SYSTEM_TIMEOUT;
  }

  async function inquire(gateway: string, reference: string, timeoutMs: number): Promise<Answer> {
    if (!deps.processors.names().includes(gateway)) {
      return { outcome: { kind: 'unknown', reason: `no adapter is configured for gateway "${gateway}"` }, exchange: { gateway, httpStatus: 0, response: '' } };
    }
    return deps.processors.get(gateway).inquire(reference, timeoutMs);
  }

  return withPermanentFailures({ settleUncertainRebill });
}

/** Why an answer settles nothing: no answer, a refusal, or an open challenge. */
function reasonOf(answer: Answer): string {
  const outcome = answer.outcome;
  if (outcome?.kind === 'unknown') return `the processor's inquiry failed: ${outcome.reason}`;
  return `the processor answered ${outcome?.kind ?? 'nothing'} (HTTP ${answer.exchange.httpStatus})`;
}
