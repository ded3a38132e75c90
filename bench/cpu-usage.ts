import { readdirSync, readFileSync } from 'node:fs';

/** CPU time (ms) used so far by each group of processes on this machine, read from /proc (Linux only). */
export type CpuSnapshot = Map<string, number>;

const TICKS_PER_SECOND = 100;

/**
 * Where the machine's CPU went: the bench's own processes by name (gateway, worker, sandbox, the load generator),
 * PostgreSQL's backends, the Temporal server, everything else. Exited processes drop out, so compare snapshots
 * taken around a run whose processes live throughout (connection pools keep PostgreSQL's backends).
 */
export function snapshotCpu(named: ReadonlyMap<number, string>): CpuSnapshot {
  const usage: CpuSnapshot = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // The command name is in parentheses and may hold spaces; the fields after it are space-separated.
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND; // utime + stime
    const group = named.get(Number(entry)) ?? (comm === 'postgres' ? 'PostgreSQL' : comm.startsWith('temporal') ? 'Temporal server' : 'other');
    usage.set(group, (usage.get(group) ?? 0) + ms);
  }
  return usage;
}

/** CPU ms per request of each group between two snapshots, largest first. */
export function cpuPerRequest(before: CpuSnapshot, after: CpuSnapshot, requests: number): [string, number][] {
  return [...after]
    .map(([group, ms]): [string, number] => [group, (ms - (before.get(group) ?? 0)) / Math.max(requests, 1)])
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1]);
}
