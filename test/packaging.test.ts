import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..');

describe('the production image', () => {
  it('installs from the lockfile without dev dependencies (`npm ci --omit=dev`, as the Dockerfile does)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'npm-ci-'));
    try {
      for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(REPO, file), path.join(dir, file));
      // npm's debug log goes to the test's own folder, removed after, not to ~/.npm/_logs (a test leaves no file behind).
      const { stdout } = await promisify(execFile)('npm', ['ci', '--dry-run', '--omit=dev', '--no-audit', '--no-fund', `--logs-dir=${path.join(dir, 'npm-logs')}`], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
      expect(stdout).toMatch(/added \d+ packages/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('copies every source folder of the product', () => {
    const copied = [...readFileSync(path.join(REPO, 'Dockerfile'), 'utf8').matchAll(/^COPY (\S+) \.\/\S+$/gm)].map((match) => match[1]);
    const notShipped = new Set(['test', 'bench', 'scratch', 'node_modules', 'docs', 'deploy']);
    const sourceFolders = readdirSync(REPO, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !notShipped.has(entry.name))
      .map((entry) => entry.name);
    expect(copied).toEqual(expect.arrayContaining(sourceFolders));
  });
});
