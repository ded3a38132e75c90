/** Runs `iteration` on `concurrency` parallel loops for `durationMs`; reports latency percentiles and rate. */
export async function closedLoop(options: { concurrency: number; durationMs: number; iteration: () => Promise<void> }) {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + options.durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (Date.now() < deadline) {
        const t0 = performance.now();
        try {
          await options.iteration();
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
  return { p50: percentile(50), p99: percentile(99), perSecond: latencies.length / seconds, count: latencies.length, errors };
}
