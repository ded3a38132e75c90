import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/contract/search-attributes.ts';
import { stopChild } from '../child-process.ts';


export interface TemporalDevServerHandle {
  readonly address: string;
  readonly uiUrl: string;
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

/** Runs `temporal server start-dev` (real server, SQLite file under dataDir, UI on) and waits until it answers. */
export async function startTemporalDevServer(options: {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  log?: (line: string) => void;
}): Promise<TemporalDevServerHandle> {
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
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
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
  child.once('exit', () => (exited = true));
  while (Date.now() < deadline) {
    if (exited) throw new Error(`temporal server start-dev exited:\n${output.join('')}`);
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
