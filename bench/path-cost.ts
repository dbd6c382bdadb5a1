/**
 * What one message costs on the in-memory path, counted rather than timed: promises created (an async hook on
 * PROMISE; with a hook on, V8 also makes a throwaway promise per `await`, counted too), bytes allocated (V8's
 * sampling heap profiler, keeping the samples of objects the GC already took), and events recorded, per message, for
 * the runtime and for the floor (bench/floor.ts), the same closed loop on each. The counts do not depend on the
 * machine's load; the CPU time per message (a pass of its own, no hook on) depends on it less than throughput does.
 *
 *   npm run build && npx tsx bench/path-cost.ts [sessions=1000] [messagesPerSession=5] [concurrency=8]
 */
import { createHook } from 'node:async_hooks';
import { Session } from 'node:inspector/promises';
import { createRuntime, createMemoryLedger } from '../dist/index.js';
import { scriptedModel } from '../dist/testing/index.js';
import { argument, closedLoop, type SendMessage, type Workload } from './closed-loop.js';
import { createFloor } from './floor.js';

const workload: Workload = { sessions: argument(2, 1000), perSession: argument(3, 5) };
const concurrency = argument(4, 8);

interface SampleNode {
  selfSize: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children: SampleNode[];
}

/** The sampled bytes of a profile's tree, and the biggest allocating functions. */
function sampled(root: SampleNode): { total: number; top: Map<string, number>; files: Map<string, number> } {
  const top = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  const name = (node: SampleNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'} ${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}`;
  };
  // A native frame (a constructor, `then`) is named with its caller.
  const visit = (node: SampleNode, caller: string): void => {
    total += node.selfSize;
    const own = name(node);
    const where = node.callFrame.url === '' ? `${own} <- ${caller}` : own;
    if (node.selfSize > 0) top.set(where, (top.get(where) ?? 0) + node.selfSize);
    const file = (node.callFrame.url === '' ? caller : own).replace(/^\S+ /, '').replace(/:\d+$/, '');
    if (node.selfSize > 0) files.set(file, (files.get(file) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child, own);
  };
  visit(root, '');
  return { total, top, files };
}

/** Run `pass` with the promise counter and the allocation sampler on; print the per-message figures. */
async function measure(name: string, pass: () => Promise<number>): Promise<void> {
  await pass(); // warm up (and let first-time allocations happen outside the count)
  const messages = workload.sessions * workload.perSession;
  // The process's CPU time per message, no hook on (all threads: the main one and V8's GC helpers).
  const cpuBefore = process.cpuUsage();
  await pass();
  const cpu = process.cpuUsage(cpuBefore);
  const cpuPerMessage = (cpu.user + cpu.system) / messages;
  // Promises first, on a pass of their own (the hook allocates too), then bytes.
  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  }).enable();
  const events = await pass();
  hook.disable();
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await pass();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: SampleNode } };
  session.disconnect();
  const { total, top, files } = sampled(profile.head);
  console.log(
    `${name}: ${(promises / messages).toFixed(1)} promises, ${(total / messages / 1024).toFixed(1)} KB allocated, ` +
      `${(events / messages).toFixed(2)} events recorded, ${cpuPerMessage.toFixed(0)} µs of CPU per message`,
  );
  const byFile = [...files.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 12));
  for (const [file, bytes] of byFile)
    console.log(`  ${(bytes / messages / 1024).toFixed(2).padStart(6)} KB  ${file}`);
  console.log('  by function:');
  const biggest = [...top.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP ?? 12));
  for (const [where, bytes] of biggest)
    console.log(`  ${(bytes / messages / 1024).toFixed(2).padStart(6)} KB  ${where}`);
}

let round = 0;
/** A runtime pass on fresh sessions; returns the events its ledger recorded. */
async function runtimePass(): Promise<number> {
  const ledger = createMemoryLedger();
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(() => ({ text: 'ok, done' }), { record: false }) },
    model: { provider: 'scripted', model: 'bench' },
    queue: { mode: 'followup', debounceMs: 0 },
    globalLane: { concurrency },
  });
  const prefix = `r${round++}`;
  const send: SendMessage = async (session, message, acknowledged) => {
    const chat = runtime.session(`${prefix}:${session}`);
    await chat.send({ id: `m${message}`, text: 'hello' });
    acknowledged();
    const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
    if (ended.status !== 'ended') throw new Error('run did not end');
  };
  await closedLoop(workload, send);
  const events = await ledger.lastCursor();
  await runtime.close();
  return events;
}

/** A floor pass on fresh sessions (it records no events). */
async function floorPass(): Promise<number> {
  const floor = createFloor({ concurrency });
  const prefix = `f${round++}`;
  await closedLoop(workload, async (session, message, acknowledged) => {
    const { done } = await floor.session(`${prefix}:${session}`).send({ id: `m${message}`, text: 'hello' });
    acknowledged();
    await done;
  });
  await floor.close();
  return 0;
}

console.log(
  `path cost: ${workload.sessions} sessions x ${workload.perSession} messages, concurrency ${concurrency}`,
);
if (process.env.BENCH_ONLY !== 'runtime') await measure('floor', floorPass);
if (process.env.BENCH_ONLY !== 'floor') await measure('runtime', runtimePass);
