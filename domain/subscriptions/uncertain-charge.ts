/**
 * What the processor says today about one attempt of a rebill whose charge was left uncertain (its answer lost, its
 * approval not voided, its payment ended without a result), asked when the merchant resumes billing:
 * - `approved`: the approval stands; `recorded` when this gateway holds the attempt's transaction (it can then be
 *   recorded as the period's charge), false when the database never recorded the attempt;
 * - `not_charged`: declined, voided, or never seen by the processor;
 * - `unanswered`: no answer, a refused inquiry, or an answer that does not settle it (a contradiction included).
 */
export type AttemptAtProcessor =
  | { readonly kind: 'approved'; readonly recorded: boolean }
  | { readonly kind: 'not_charged' }
  | { readonly kind: 'unanswered'; readonly reason: string };

/**
 * What billing does with an uncertain rebill, from what the processor says of each of its attempts:
 * - `charged`: an approval this gateway recorded stands, so the period is paid by it (charging again would charge twice);
 * - `not_charged`: every attempt is known to have charged nothing, so the period is charged anew under a new order;
 * - `unknown`: any attempt the processor would not answer for, or an approval no transaction of ours records, keeps the
 *   charge uncertain: billing pauses again (never a second charge on a guess).
 */
export type UncertainChargeVerdict = { readonly kind: 'charged' } | { readonly kind: 'not_charged' } | { readonly kind: 'unknown'; readonly reason: string };

export function uncertainChargeVerdict(attempts: readonly AttemptAtProcessor[]): UncertainChargeVerdict {
  // A recorded approval settles the period whatever the other attempts say: a cascade never sends a second attempt
  // after an approval, nor after an answer it did not know.
  if (attempts.some((attempt) => attempt.kind === 'approved' && attempt.recorded)) return { kind: 'charged' };
  const unrecorded = attempts.find((attempt) => attempt.kind === 'approved');
  if (unrecorded) return { kind: 'unknown', reason: 'the processor holds an approval this gateway never recorded' };
  const unanswered = attempts.find((attempt): attempt is Extract<AttemptAtProcessor, { kind: 'unanswered' }> => attempt.kind === 'unanswered');
  if (unanswered) return { kind: 'unknown', reason: unanswered.reason };
  return { kind: 'not_charged' };
}
