import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool, type Ledger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { createRunJobs } from '../../src/runner/run-request.js';

/** `hold` runs until `release()`; `note` logs its text. Both log what they do, in order. */
function tools() {
  const log: string[] = [];
  let release: (() => void) | undefined;
  let started: () => void = () => undefined;
  const holding = new Promise<void>((resolve) => (started = resolve));
  const hold = defineTool({
    name: 'hold',
    description: 'Hold until released',
    input: z.object({}),
    execute: async () => {
      log.push('hold started');
      started();
      await new Promise<void>((resolve) => (release = resolve));
      log.push('hold done');
      return 'held';
    },
  });
  const note = defineTool({
    name: 'note',
    description: 'Note a text',
    input: z.object({ text: z.string() }),
    execute: ({ text }) => {
      log.push(`note ${text}`);
      return 'noted';
    },
  });
  return { tools: [hold, note], log, holding, release: () => release?.() };
}

/** One id source for both processes, as two processes of one bot never reuse an id. */
const ids = sequentialIds();

function start(ledger: Ledger, script: Script, kit = tools()) {
  const clock = fakeClock({ now: 0 });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    tools: kit.tools,
    clock,
    ids,
    random: () => 0.5,
  });
  return { runtime, clock, kit };
}

const now = { mode: 'followup', debounceMs: 0 } as const;

describe('plan runs and undos handed to a session, across a restart', () => {
  it('a snapshot saved with a plan waiting for its turn starts nothing after a restart, not even a job of the same id', async () => {
    const ledger = createMemoryLedger();
    // A first process leaves session "a" stored with a plan run that was waiting for the session's active run
    // (its job "job-1" lived in that process), as a snapshot persisted meanwhile keeps it.
    const first = start(ledger, [{ text: 'hello' }]);
    await first.runtime.session('a').send('hi', now);
    await first.clock.advance(0);
    await first.runtime.session('a').waitForEnd();
    const closing = first.runtime.close();
    await first.clock.runAll();
    await closing;
    const record = await ledger.getSession('a');
    const snapshot = record?.snapshot as { context: Record<string, unknown> };
    const waiting = [{ runId: 'plan-of-a-dead-process', kind: 'plan', job: 'job-1' }];
    await ledger.putSession({
      ...record!,
      snapshot: { ...snapshot, context: { ...snapshot.context, work: waiting } },
    });

    // The next process: session "b" runs and has its own plan waiting behind that run, as job "job-1".
    const call = { id: 'h1', name: 'hold', args: {} };
    const next = start(ledger, [{ toolCalls: [call] }, { text: 'done' }]);
    const b = next.runtime.session('b');
    await b.send('go', now);
    await next.kit.holding;
    expect(next.kit.log).toEqual(['hold started']);
    const planning = b.executePlan({ steps: [{ id: 'n', tool: 'note', args: { text: 'of b' } }] });
    await next.clock.advance(0);

    // "a" hydrates: the plan its snapshot remembers is gone with its caller, and b's job is not a's to start.
    expect(await next.runtime.session('a').waitForEnd({ timeoutMs: 0 })).toMatchObject({ status: 'idle' });
    await next.clock.advance(0);
    expect(next.kit.log).toEqual(['hold started']);
    expect(next.runtime.session('a').status()).toMatchObject({ state: 'idle', queued: 0 });
    expect(await next.runtime.session('a').runs()).toHaveLength(1);

    // b's plan runs after b's run, in b.
    next.kit.release();
    expect(await planning).toMatchObject({ status: 'completed', results: [{ stepId: 'n', success: true }] });
    expect(next.kit.log).toEqual(['hold started', 'hold done', 'note of b']);
    const ending = next.runtime.close();
    await next.clock.runAll();
    await ending;
  });
});

describe('createRunJobs', () => {
  it('hands a job only to the START of its own run of its own session, once', () => {
    const jobs = createRunJobs();
    const job = {
      sessionKey: 'b',
      runId: 'plan_1',
      run: () => Promise.reject(new Error('unused')),
      fail: () => {},
    };
    const id = jobs.add(job);
    expect(jobs.take(id, 'a', 'plan_1')).toBeUndefined();
    expect(jobs.take(id, 'b', 'plan_2')).toBeUndefined();
    expect(jobs.take(id, 'b', 'plan_1')).toBe(job);
    expect(jobs.take(id, 'b', 'plan_1')).toBeUndefined();
  });
});
