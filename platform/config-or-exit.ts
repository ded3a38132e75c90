import { ConfigError } from './config.ts';

/**
 * For a process's entry point: what `read` takes from the configuration, or, when a setting is bad or missing, its
 * problems told on stderr in a few lines and exit status 1. Node would print the ConfigError's stack and the source
 * line that threw it, which points at the loader rather than at the variable to fix. Other errors are thrown as ever.
 */
export function configOrExit<T>(read: () => T, stderr: NodeJS.WritableStream = process.stderr): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    stderr.write(`${error.message}\nEvery setting is described in docs/configuration.md.\n`);
    process.exit(1);
  }
}
