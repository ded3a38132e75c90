/** A rebill of the period a stopped billing would charge next, as the database keeps it. */
export interface PeriodRebill {
  readonly attempt: number;
  readonly state: 'processing' | 'paid' | 'declined';
  /** Its payment opened the order: the charge was (or is being) made. */
  readonly orderOpened: boolean;
}

/**
 * How billing that stopped (its workflow failed or was terminated) starts again for the period due: with the next
 * try of that period, or not at all when a try's outcome was never recorded (its payment opened the order and the
 * rebill is still `processing`: charging again could charge twice, so an operator settles it first). A try prepared
 * but never charged is charged under its own order (the order id is kept, so the processor sees one attempt).
 */
export type BillingRestart = { readonly kind: 'restart'; readonly retries: number } | { readonly kind: 'operator'; readonly reason: string };

export function billingRestartOf(period: number, rebills: readonly PeriodRebill[]): BillingRestart {
  const last = rebills.reduce<PeriodRebill | undefined>((latest, rebill) => (latest === undefined || rebill.attempt > latest.attempt ? rebill : latest), undefined);
  // Period 0 is a salvaged checkout's declined charge: its first retry is attempt 1, as the checkout starts billing.
  if (!last) return { kind: 'restart', retries: period === 0 ? 1 : 0 };
  if (last.state === 'processing') {
    if (last.orderOpened) return { kind: 'operator', reason: `the charge of period ${period}, try ${last.attempt}, has no recorded outcome` };
    return { kind: 'restart', retries: last.attempt };
  }
  return { kind: 'restart', retries: last.attempt + 1 };
}
