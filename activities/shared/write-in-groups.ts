/**
 * Writes items as they arrive, a group per write: the first item is written at once, and whatever arrives while
 * that write is in flight goes into the next one. How an activity that does many outside calls records each
 * result soon after it happens (a worker lost midway leaves only the calls in flight unrecorded) without one
 * statement per call when they finish together.
 *
 * `write` owns its retries and giving up; should it throw all the same, the next groups are still written and
 * `settled` rejects with the first error (nothing is left unhandled in between to stop the process). `settled`
 * resolves once every item added so far is written.
 */
export interface GroupWriter<T> {
  add(item: T): void;
  settled(): Promise<void>;
}

export function writeInGroups<T>(write: (group: readonly T[]) => Promise<void>): GroupWriter<T> {
  let waiting: T[] = [];
  let writing: Promise<void> | undefined;
  let firstFailure: { error: unknown } | undefined;

  async function drain(): Promise<void> {
    while (waiting.length > 0) {
      const group = waiting;
      waiting = [];
      try {
        await write(group);
      } catch (error) {
        firstFailure ??= { error };
      }
    }
    // No await between the last check and this: an item added from here on starts a new drain.
    writing = undefined;
  }

  return {
    add(item) {
      waiting.push(item);
      writing ??= drain();
    },
    async settled() {
      while (writing) await writing;
      if (firstFailure) throw firstFailure.error;
    },
  };
}
