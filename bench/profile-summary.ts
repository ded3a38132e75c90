/**
 * `tsx bench/profile-summary.ts <dir or .cpuprofile files>`: where the CPU time of a profiled bench run went.
 * For each V8 CPU profile (written by `BENCH_CPU_PROF=<dir> npm run bench`), prints the share of sampled time
 * per package or product folder (self time), and the heaviest functions.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const inputs = process.argv.slice(2).flatMap((arg) =>
  statSync(arg).isDirectory() ? readdirSync(arg).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(arg, f)) : [arg],
);

/** Where a frame's code lives: an npm package, a folder of the product, Node's own code, or V8 (GC, idle, native). */
function areaOf(url: string, functionName: string): string {
  if (!url) return `(${functionName || 'native'})`;
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1]!;
  if (url.startsWith('node:')) return 'node internals';
  const repoMatch = /\/(api|services|data|domain|activities|workflows|adapters|platform|schema|worker|sandbox|scripts|bench)\//.exec(url);
  return repoMatch ? `${repoMatch[1]}/` : url.slice(-60);
}

for (const file of inputs) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const total = profile.endTime - profile.startTime;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const { callFrame } = byId.get(id)!;
    const area = areaOf(callFrame.url, callFrame.functionName);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
    const name = `${callFrame.functionName || '(anonymous)'} ${area}:${callFrame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
  }
  const busy = total - (byArea.get("((idle))") ?? 0);
  const top = (map: Map<string, number>, count: number) =>
    [...map].filter(([name]) => !name.startsWith("((idle))") && !name.startsWith("(idle)")).sort((a, b) => b[1] - a[1]).slice(0, count)
      .map(([name, micros]) => `| ${name} | ${(micros / 1000).toFixed(0)} | ${((100 * micros) / busy).toFixed(1)} % |`);
  process.stdout.write(
    [
      `## ${path.basename(file)}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy`,
      '',
      '| where | self ms | share of busy |',
      '| --- | --- | --- |',
      ...top(byArea, 15),
      '',
      '| function | self ms | share of busy |',
      '| --- | --- | --- |',
      ...top(byFunction, 15),
      '',
    ].join('\n') + '\n',
  );
}
