/**
 * When a refused caller's next request fits the sliding window again (`current + 1 + previous × (1 − elapsed)
 * ≤ limit`, with elapsed the fraction of the current window gone), in whole seconds, at least 1.
 */
export function secondsUntilAdmitted(input: { current: number; previous: number; limit: number; elapsed: number; windowSeconds: number }): number {
  const { current, previous, limit, elapsed, windowSeconds } = input;
  let waitFraction: number;
  if (current + 1 <= limit) {
    // Fits in this window once enough of the previous one has slid out.
    waitFraction = 1 - (limit - current - 1) / previous - elapsed;
  } else {
    // Only in the next window, once enough of this one (then the previous) has slid out.
    waitFraction = 1 - elapsed + Math.max(0, 1 - (limit - 1) / current);
  }
  return Math.max(1, Math.ceil(waitFraction * windowSeconds - 1e-9));
}
