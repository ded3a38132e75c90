/**
 * Delays of slow answers (amount `.98`), remembered so that closing the sandbox releases them at once
 * instead of keeping the process alive for `slowResponseMs`.
 */
export interface SlowAnswers {
  wait(ms: number): Promise<void>;
  releaseAll(): void;
}

export function createSlowAnswers(): SlowAnswers {
  const pending = new Set<() => void>();
  return {
    wait(ms) {
      return new Promise((resolve) => {
        const release = () => {
          clearTimeout(timer);
          pending.delete(release);
          resolve();
        };
        const timer = setTimeout(release, ms);
        pending.add(release);
      });
    },
    releaseAll() {
      for (const release of [...pending]) release();
    },
  };
}
