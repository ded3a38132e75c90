import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Ledger, LedgerState } from './ledger.ts';

/** How long after a change the ledger is written: a burst of payments is one write, not one per payment. */
const SAVE_DELAY_MS = 200;

/** The ledger saved at `file`, or undefined when there is none yet. A file that is not a ledger stops the sandbox. */
export function readLedgerFile(file: string): LedgerState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LedgerState;
  } catch (error) {
    throw new Error(`The sandbox ledger ${file} cannot be read (${(error as Error).message}); move it away to start with an empty one`);
  }
}

/**
 * Writes the ledger to `file` shortly after each change, whole, through a temporary file renamed over it: a sandbox
 * stopped mid-write keeps the previous ledger, never half of one. `flush` writes what is pending at once (on close).
 */
export function saveLedgerToFile(ledger: Ledger, file: string): { changed(): void; flush(): void } {
  mkdirSync(path.dirname(file), { recursive: true });
  let timer: NodeJS.Timeout | undefined;
  const write = () => {
    timer = undefined;
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(ledger.snapshot()));
    renameSync(temporary, file);
  };
  return {
    changed() {
      timer ??= setTimeout(write, SAVE_DELAY_MS);
    },
    flush() {
      if (timer === undefined) return;
      clearTimeout(timer);
      write();
    },
  };
}
