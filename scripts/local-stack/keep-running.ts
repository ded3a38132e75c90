/** How a server's process ended. */
export interface ServerExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A server `npm start` runs as a process of its own (the Temporal dev server, embedded PostgreSQL). */
export interface RunningServer {
  readonly exited: Promise<ServerExit>;
  stop(): Promise<void>;
}

export interface KeepRunningOptions<T extends RunningServer> {
  /** As people call it: `Temporal dev server`. */
  readonly name: string;
  /** Starts it again; none for a server that cannot safely be (the stop is then asked for at once). */
  readonly restart?: () => Promise<T>;
  /** Called with each server started again (to record its pid). */
  readonly restarted?: (server: T) => void;
  /** Restarts within `windowMs` after which it is given up. */
  readonly maxRestarts: number;
  readonly windowMs: number;
  report(line: string): void;
  /** The server is gone for good: the caller stops everything, saying why. */
  giveUp(reason: string): void;
}

/**
 * Keeps a server running under `npm start`: when its process ends on its own (killed, crashed), it is started again
 * on the same data, so the gateway and worker, which reconnect by themselves, carry on; a server that keeps ending,
 * or cannot be started again, ends `npm start`, which says why, rather than leaving its processes failing
 * without a word. The returned stop ends whichever server is current, after any restart under way.
 */
export function keepRunning<T extends RunningServer>(first: T, options: KeepRunningOptions<T>): { stop(): Promise<void> } {
  let current = first;
  let stopped = false;
  let restarting: Promise<void> = Promise.resolve();
  let ends: number[] = [];

  const watch = (server: T) =>
    void server.exited.then((exit) => {
      if (stopped) return;
      const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
      const now = Date.now();
      ends = [...ends.filter((at) => now - at < options.windowMs), now];
      if (!options.restart) return options.giveUp(`the ${options.name} exited (${how})`);
      if (ends.length > options.maxRestarts) {
        return options.giveUp(`the ${options.name} exited (${how}), ${ends.length} times within ${options.windowMs / 1000} s`);
      }
      options.report(`${options.name} exited (${how}); starting it again`);
      restarting = (async () => {
        try {
          const next = await options.restart!();
          if (stopped) return void (await next.stop());
          current = next;
          options.restarted?.(next);
          options.report(`${options.name} running again`);
          watch(next);
        } catch (error) {
          if (!stopped) options.giveUp(`the ${options.name} did not start again: ${error instanceof Error ? error.message : String(error)}`);
        }
      })();
    });
  watch(first);

  return {
    async stop() {
      stopped = true;
      await restarting;
      await current.stop();
    },
  };
}
