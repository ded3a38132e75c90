import type { ChildProcess } from 'node:child_process';
import { stopChild } from '../child-process.ts';

export interface SupervisedProcess {
  readonly name: string;
  start(): ChildProcess;
  /** How long it may take to stop on SIGTERM before it is killed (a worker drains its tasks). */
  readonly stopGraceMs: number;
}

export interface SupervisorOptions {
  /** Crashes of one process within `crashWindowMs` after which the supervisor gives up. */
  readonly maxCrashes: number;
  readonly crashWindowMs: number;
  /** First restart delay; doubled for each further crash within the window. */
  readonly firstRestartDelayMs: number;
  report(line: string): void;
  /** Why a process exited on its own, in its own words when it said any (its log's last error). */
  explain?(exit: { readonly name: string; readonly signal: NodeJS.Signals | null }): string | undefined;
  /** Called once when a process keeps crashing; the caller stops everything. */
  giveUp(name: string): void;
}

export interface Supervisor {
  /** Stops every process once, in the reverse of the start order, and keeps them stopped. */
  stop(): Promise<void>;
}

/**
 * Development supervision: starts the processes in order, restarts one that exits on its own (a crash,
 * a kill -9) with growing delays, and gives up after repeated crashes. Production leaves this to the
 * platform (systemd, Kubernetes).
 */
export function supervise(processes: readonly SupervisedProcess[], options: SupervisorOptions): Supervisor {
  let stopping: Promise<void> | undefined;
  const entries = processes.map((spec) => ({ spec, child: undefined as ChildProcess | undefined, crashes: [] as number[], restart: undefined as NodeJS.Timeout | undefined }));

  function run(entry: (typeof entries)[number]) {
    const child = entry.spec.start();
    entry.child = child;
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const now = Date.now();
      entry.crashes = [...entry.crashes.filter((at) => now - at < options.crashWindowMs), now];
      const why = options.explain?.({ name: entry.spec.name, signal });
      const how = `${signal ? `signal ${signal}` : `code ${code}`}${why ? `: ${why}` : ''}`;
      if (entry.crashes.length >= options.maxCrashes) {
        options.report(`${entry.spec.name} exited (${how}), ${entry.crashes.length} times within ${options.crashWindowMs / 1000} s: giving up`);
        options.giveUp(entry.spec.name);
        return;
      }
      const delay = options.firstRestartDelayMs * 2 ** (entry.crashes.length - 1);
      options.report(`${entry.spec.name} exited (${how}); restarting it in ${delay} ms`);
      entry.restart = setTimeout(() => {
        entry.restart = undefined;
        if (!stopping) run(entry);
      }, delay);
    });
  }

  for (const entry of entries) run(entry);

  return {
    stop() {
      stopping ??= (async () => {
        for (const entry of [...entries].reverse()) {
          clearTimeout(entry.restart);
          if (entry.child) await stopChild(entry.child, entry.spec.stopGraceMs);
        }
      })();
      return stopping;
    },
  };
}
