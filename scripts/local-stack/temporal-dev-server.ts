import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { stopChild } from '../child-process.ts';
import type { ServerExit } from './keep-running.ts';


export interface TemporalDevServerHandle {
  readonly address: string;
  /** The server's process (a later start finds it by it: `leftovers.ts`). */
  readonly pid: number;
  readonly uiUrl: string;
  /** Resolves when the server's process ends, stopped or not (`npm start` starts it again when not). */
  readonly exited: Promise<ServerExit>;
  stop(): Promise<void>;
}


/**
 * Dynamic config the product needs: Update-With-Start (early return of the submit result)
 * is a multi-operation, off by default on some CLI versions.
 */
const DYNAMIC_CONFIG = [
  'frontend.enableExecuteMultiOperation=true',
  'frontend.enableUpdateWorkflowExecution=true',
  'frontend.workerVersioningWorkflowAPIs=true',
  // Lets a client sharing a worker's connection run a new workflow's first task in-process (bench: eager floor).
  'system.enableEagerWorkflowStart=true',
];

/**
 * How many times a start is tried when the CLI reports a port already taken. `start-dev` picks its
 * own HTTP API, metrics and internal ports at random before it binds `--port`, so it can pick a port
 * that is free at that instant but about to be bound: its own `--port`, or one another process was
 * just handed. A second start picks anew. A port that stays taken fails every try with the same error.
 */
const START_ATTEMPTS = 3;

/** Runs `temporal server start-dev` (real server, SQLite file under dataDir, UI on) and waits until it answers. */
export async function startTemporalDevServer(options: DevServerOptions): Promise<TemporalDevServerHandle> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= START_ATTEMPTS) throw error;
      options.log?.(`temporal server start-dev found a port taken; starting again (try ${attempt + 1} of ${START_ATTEMPTS})`);
    }
  }
}

interface DevServerOptions {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  log?: (line: string) => void;
}

class PortTakenError extends Error {}

async function startOnce(options: DevServerOptions): Promise<TemporalDevServerHandle> {
  mkdirSync(options.dataDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--db-filename', path.resolve(options.dataDir, 'temporal.sqlite'),
    // WAL: about 1.5 times the workflow throughput of SQLite's default rollback journal here.
    '--sqlite-pragma', 'journal_mode=wal',
    '--sqlite-pragma', 'synchronous=normal',
    '--port', String(options.port),
    '--ui-port', String(options.uiPort),
    '--ip', '127.0.0.1',
    '--namespace', options.namespace,
    '--log-level', 'warn',
    '--ui-disable-news-fetch',
    ...DYNAMIC_CONFIG.flatMap((value) => ['--dynamic-config-value', value]),
    ...ALL_SEARCH_ATTRIBUTES.flatMap((key) => ['--search-attribute', `${key.name}=${searchAttributeTypeName(key.type)}`]),
  ];
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<ServerExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  // Output is kept only until the server answers, to explain a failed start.
  let output: string[] | undefined = [];
  const collect = (chunk: Buffer) => {
    const text = chunk.toString();
    output?.push(text);
    options.log?.(text.trimEnd());
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const address = `127.0.0.1:${options.port}`;
  await waitUntilReachable(address, child, output);
  output = undefined;
  return {
    address,
    pid: child.pid!,
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
    exited,
    stop: () => stopChild(child),
  };
}

function searchAttributeTypeName(type: string): string {
  const names: Record<string, string> = { KEYWORD: 'Keyword', TEXT: 'Text', INT: 'Int', DOUBLE: 'Double', BOOL: 'Bool', DATETIME: 'Datetime', KEYWORD_LIST: 'KeywordList' };
  const name = names[type];
  if (!name) throw new Error(`Unknown search attribute type ${type}`);
  return name;
}

async function waitUntilReachable(address: string, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  let exited = false;
  // 'close', not 'exit': the output that says why (a port taken) may still be on its way when the process exits.
  child.once('close', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) {
      const text = output.join('');
      const message = `temporal server start-dev exited:\n${text}`;
      throw /address already in use/.test(text) ? new PortTakenError(message) : new Error(message);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      await connection.workflowService.getSystemInfo({});
      await connection.close();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  child.kill('SIGKILL');
  throw new Error(`temporal server start-dev did not answer on ${address} within 60 s:\n${output.join('')}`);
}
