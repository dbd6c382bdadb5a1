/**
 * Where the time goes: summarise a V8 CPU profile (`node --cpu-prof`) by self time, grouped by file (the runtime's
 * own files under dist/, each dependency as one package, Node internals, GC) and the top functions.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/runtime.ts
 *   npx tsx bench/profile-summary.ts /tmp/prof/<file>.cpuprofile [rows=25]
 */
import { readFileSync } from 'node:fs';
import { argument } from './closed-loop.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A short name for where a function lives: `dist/ledger/sqlite/ledger.js`, `xstate`, `node:internal`, `(gc)`. */
function placeOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dependency?.[1] !== undefined) return dependency[1];
  const own = /\/(dist|bench)\/(.+)$/.exec(url);
  if (own?.[1] !== undefined && own[2] !== undefined) return `${own[1]}/${own[2]}`;
  if (url.startsWith('node:')) return 'node:internal';
  return url;
}

/** Self time in ms per key, largest first. */
function ranked(times: Map<string, number>, rows: number): Array<[string, number]> {
  return [...times].sort((a, b) => b[1] - a[1]).slice(0, rows);
}

function add(times: Map<string, number>, key: string, ms: number): void {
  times.set(key, (times.get(key) ?? 0) + ms);
}

const path = process.argv[2];
if (path === undefined) throw new Error('usage: profile-summary.ts <file.cpuprofile> [rows]');
const rows = argument(3, 25);
const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const byPlace = new Map<string, number>();
const byFunction = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, index) => {
  const node = byId.get(id);
  const ms = (profile.timeDeltas[index] ?? 0) / 1000;
  if (node === undefined) return;
  const { functionName, url, lineNumber } = node.callFrame;
  if (functionName === '(idle)') return;
  total += ms;
  const place = placeOf(url, functionName);
  add(byPlace, place, ms);
  add(byFunction, `${functionName || '(anonymous)'} ${place}:${lineNumber + 1}`, ms);
});

const share = (ms: number): string => `${((ms / total) * 100).toFixed(1).padStart(5)} %`;
console.log(`profile ${path}: ${(total / 1000).toFixed(2)} s of CPU (idle excluded)`);
console.log('\nself time by file or package:');
for (const [place, ms] of ranked(byPlace, rows)) console.log(`  ${share(ms)}  ${place}`);
console.log('\nself time by function:');
for (const [name, ms] of ranked(byFunction, rows)) console.log(`  ${share(ms)}  ${name}`);
