import { spawn } from 'node:child_process';

/** Set by the launcher in the copy it starts; an internal marker, not a setting. */
const COPY_MARKER = 'PAYMENTS_START_OWN_GROUP';

/**
 * A terminal's Ctrl-C signals its whole foreground process group, and npm forwards signals again to
 * its child: every process would get one or two signals and stop on its own, out of order (embedded
 * PostgreSQL, which we do not spawn ourselves, first of all). So the script re-runs itself detached,
 * in a process group of its own, and everything it starts lives in that group. This launcher stays
 * in the terminal's group, turns the first SIGINT/SIGTERM/SIGHUP into one SIGTERM for the copy, and
 * exits with the copy's exit code.
 *
 * Returns in the copy, with a function that calls back once if the launcher disappears (even by
 * SIGKILL: the IPC channel closes), so the copy can stop everything rather than be left behind.
 * In the launcher it never returns.
 */
export async function continueInOwnProcessGroup(): Promise<{ onLauncherGone(listener: () => void): void }> {
  if (process.env[COPY_MARKER] === '1') {
    process.channel?.unref(); // the channel alone must not keep the copy alive
    return { onLauncherGone: (listener) => process.once('disconnect', listener) };
  }
  const copy = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [COPY_MARKER]: '1' },
  });
  let relayed = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (relayed) return;
      relayed = true;
      copy.kill('SIGTERM');
    });
  }
  copy.once('exit', (code) => process.exit(code ?? 1));
  return new Promise(() => {});
}
