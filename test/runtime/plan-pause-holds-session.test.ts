import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createMemoryLedger,
  createRuntime,
  defineTool,
  isRuntimeError,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { type RunRecord } from 'agentlanes/ledger';
import { fakeClock, scriptedModel, type FakeClock, type Script } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { errorOf } from '../support/error-of.js';
import { ledgerKinds, tempLedgerPath } from '../support/temp-ledger.js';

/** `pay` needs approval (high risk); `wait` takes `ms` on the fake clock. */
function tools(holder: { clock?: FakeClock }, log: string[]) {
  return [
    defineTool({
      name: 'pay',
      description: 'Pay someone',
      risk: 'high',
      input: z.object({ to: z.string() }),
      execute: ({ to }) => {
        log.push(`pay ${to}`);
        return { paid: to };
      },
    }),
    defineTool({
      name: 'wait',
      description: 'Wait a while',
      input: z.object({ ms: z.number() }),
      execute: async ({ ms }, { signal }) => {
        await holder.clock?.sleep(ms, signal);
        return 'waited';
      },
    }),
  ];
}

/** A runtime on `ledger`; `process` prefixes its ids, so a restarted one never reuses a run id. */
function start(ledger: RuntimeOptions['ledger'], script: Script = [{ text: 'answer' }], process = 'p1') {
  const clock = fakeClock({ now: 0 });
  const ids = sequentialIds();
  const holder = { clock };
  const log: string[] = [];
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    tools: tools(holder, log),
    clock,
    ids: (prefix) => `${process}-${ids(prefix)}`,
    random: () => 0.5,
  });
  const chat = runtime.session('web:1');
  const close = async () => {
    const closing = runtime.close();
    await clock.runAll();
    await closing;
  };
  return { runtime, clock, chat, log, close };
}

/** A followup that drains as soon as the session is free. */
const now = { mode: 'followup', debounceMs: 0 } as const;
const payPlan = { steps: [{ id: 'pay', tool: 'pay', args: { to: 'bob' } }] };
const open = new Set(['running', 'awaiting_approval', 'awaiting_tool_results']);
const openRuns = (runs: readonly RunRecord[]) => runs.filter((run) => open.has(run.status));

/** The first event `matches` accepts (the stream replays what was recorded, then follows live events). */
function nextEvent(
  runtime: ReturnType<typeof createRuntime>,
  matches: (event: RuntimeEvent) => boolean,
): Promise<RuntimeEvent> {
  const controller = new AbortController();
  return (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) {
      if (matches(event)) {
        controller.abort();
        return event;
      }
    }
    throw new Error('no such event');
  })();
}

describe.each(['memory', 'sqlite'] as const)('a paused plan on the %s ledger', (kind) => {
  it('queues a message sent while it waits, and runs it once approvePlan completes the plan', async () => {
    const { chat, close, log } = start(ledgerKinds[kind]());
    const paused = await chat.executePlan(payPlan);
    expect(paused.status).toBe('awaiting_approval');
    const sent = await chat.send({ id: 'm1', text: 'hello' }, now);
    expect(sent).toMatchObject({ disposition: 'queued', position: 1 });
    expect(sent.runId).toBeUndefined();
    expect(chat.status()).toMatchObject({ state: 'awaiting_approval', runId: paused.runId, queued: 1 });
    expect(await chat.waitForEnd()).toEqual({
      status: 'paused',
      runId: paused.runId,
      state: 'awaiting_approval',
      waiting: [{ toolCallId: 'pay', approvalId: 'pay', tool: 'pay', needs: 'approval' }],
    });
    expect(openRuns(await chat.runs()).map((run) => run.runId)).toEqual([paused.runId]);

    expect(await chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] })).toMatchObject({
      status: 'completed',
    });
    expect(log).toEqual(['pay bob']);
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', messageIds: ['m1'] } });
    const runs = await chat.runs();
    expect(runs.map((run) => [run.provider, run.status])).toEqual([
      ['plan', 'completed'],
      ['scripted', 'completed'],
    ]);
    await close();
  });

  it("answers waitForEnd on the plan's end once its run.ended reached the streams, not before", async () => {
    const { runtime, chat, close } = start(ledgerKinds[kind]());
    const paused = await chat.executePlan(payPlan);
    const seen: RuntimeEvent[] = [];
    const resumed = createDeferred<void>();
    const stop = new AbortController();
    const streaming = (async () => {
      for await (const event of runtime.events({ after: runtime.eventCursor(), signal: stop.signal })) {
        seen.push(event);
        if (event.type === 'run.resumed') resumed.resolve();
      }
    })();
    const approving = chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] });
    // The session holds the plan as running again: waitForEnd waits for its end.
    await resumed.promise;
    const ended = await chat.waitForEnd();
    expect(ended).toMatchObject({ status: 'ended', run: { runId: paused.runId, status: 'completed' } });
    expect(seen.filter((event) => event.type === 'run.ended').map((event) => event.runId)).toEqual([
      paused.runId,
    ]);
    expect(await approving).toMatchObject({ status: 'completed' });
    stop.abort();
    await streaming.catch(() => undefined);
    await close();
  });

  it('answers rejected_busy in reject mode, and queues a steer as a followup, while it waits', async () => {
    const { chat, close } = start(ledgerKinds[kind]());
    const paused = await chat.executePlan(payPlan);
    expect(await chat.send({ id: 'r1', text: 'now?' }, { mode: 'reject' })).toMatchObject({
      disposition: 'rejected',
      code: 'rejected_busy',
    });
    expect(await chat.send({ id: 's1', text: 'also this' }, { mode: 'steer' })).toMatchObject({
      disposition: 'queued',
    });
    expect(isRuntimeError(await errorOf(chat.executePlan(payPlan)), 'rejected_busy')).toBe(true);
    expect(openRuns(await chat.runs()).map((run) => run.runId)).toEqual([paused.runId]);
    await close();
  });

  it('ends the plan as interrupted on an interrupting message, then runs the message', async () => {
    const { runtime, chat, close } = start(ledgerKinds[kind]());
    const paused = await chat.executePlan(payPlan);
    const planEnded = nextEvent(
      runtime,
      (event) => event.type === 'run.ended' && event.runId === paused.runId,
    );
    const messageEnded = nextEvent(
      runtime,
      (event) => event.type === 'run.ended' && event.runId !== paused.runId,
    );
    expect(await chat.send({ id: 'i1', text: 'stop that' }, { mode: 'interrupt' })).toMatchObject({
      disposition: 'interrupted',
    });
    expect(await planEnded).toMatchObject({ status: 'interrupted', error: { code: 'cancelled' } });
    expect(await messageEnded).toMatchObject({ status: 'completed', text: 'answer' });
    const runs = await chat.runs();
    expect(runs.map((run) => [run.provider, run.status, run.messageIds])).toEqual([
      ['plan', 'interrupted', []],
      ['scripted', 'completed', ['i1']],
    ]);
    await close();
  });

  it('ends the plan as aborted on abort(), recording its waiting steps cancelled', async () => {
    const { runtime, chat, close } = start(ledgerKinds[kind]());
    const paused = await chat.executePlan(payPlan);
    const resolved = nextEvent(runtime, (event) => event.type === 'approval.resolved');
    expect(await chat.abort({ reason: 'never mind' })).toBe(true);
    expect(await resolved).toMatchObject({ toolCallId: 'pay', decision: 'cancelled' });
    expect(chat.status()).toMatchObject({ state: 'idle', queued: 0 });
    expect((await chat.runs()).map((run) => run.status)).toEqual(['aborted']);
    expect(await chat.waitForEnd()).toMatchObject({ status: 'idle' });
    const again = await errorOf(chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] }));
    expect(isRuntimeError(again, 'invalid_input')).toBe(true);
    await close();
  });
});

describe('a plan the session holds while it runs', () => {
  it('queues a message until the plan ends, also when it pauses again after an approval', async () => {
    const { chat, clock, close, log } = start(createMemoryLedger());
    const done = chat.executePlan({
      steps: [
        { id: 'w', tool: 'wait', args: { ms: 100 } },
        { id: 'pay1', tool: 'pay', args: { to: 'a' }, dependsOn: ['w'] },
        { id: 'pay2', tool: 'pay', args: { to: 'b' }, dependsOn: ['pay1'] },
      ],
    });
    await clock.advance(10);
    expect(await chat.send({ id: 'm1', text: 'hello' }, now)).toMatchObject({ disposition: 'queued' });
    expect(chat.status()).toMatchObject({ state: 'running', queued: 1 });
    await clock.advance(100);
    const paused = await done;
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['pay1'] });
    expect(openRuns(await chat.runs()).map((run) => run.runId)).toEqual([paused.runId]);
    const again = await chat.approvePlan({ runId: paused.runId, stepIds: ['pay1'] });
    expect(again).toMatchObject({ status: 'awaiting_approval', awaiting: ['pay2'] });
    expect(chat.status()).toMatchObject({ state: 'awaiting_approval', runId: paused.runId, queued: 1 });
    expect(openRuns(await chat.runs()).map((run) => run.runId)).toEqual([paused.runId]);
    await chat.approvePlan({ runId: paused.runId, stepIds: ['pay2'] });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { messageIds: ['m1'] } });
    expect(log).toEqual(['pay a', 'pay b']);
    await close();
  });

  it('has an interrupting message abort a running plan (interrupted), then run next', async () => {
    const { chat, clock, close } = start(createMemoryLedger());
    const done = chat.executePlan({ steps: [{ id: 'w', tool: 'wait', args: { ms: 100 } }] });
    await clock.advance(10);
    expect(await chat.send({ id: 'i1', text: 'now' }, { mode: 'interrupt' })).toMatchObject({
      disposition: 'interrupted',
    });
    expect(await done).toMatchObject({ status: 'aborted' }); // the plan API's word; the run records why
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { messageIds: ['i1'] } });
    expect((await chat.runs()).map((run) => [run.provider, run.status])).toEqual([
      ['plan', 'interrupted'],
      ['scripted', 'completed'],
    ]);
    // The plan ended at once: the clock never reached the end of its 100 ms step.
    expect(clock.now()).toBe(10);
    await close();
  });

  it('has status() say awaiting_approval by the time run.paused is delivered', async () => {
    const { runtime, chat, close } = start(createMemoryLedger());
    const seen = nextEvent(runtime, (event) => event.type === 'run.paused');
    const observed = seen.then(() => chat.status());
    await chat.executePlan(payPlan);
    expect(await observed).toMatchObject({ state: 'awaiting_approval' });
    await close();
  });
});

describe.each(['memory', 'sqlite'] as const)('a paused plan across a restart on the %s ledger', (kind) => {
  it('comes back paused, so a message still queues and runs once the plan is approved', async () => {
    const ledger = kind === 'memory' ? createMemoryLedger() : { path: tempLedgerPath('plan-hold') };
    const first = start(ledger);
    const paused = await first.chat.executePlan(payPlan);
    await first.close();

    const second = start(ledger, [{ text: 'after restart' }], 'p2');
    expect(await second.chat.waitForEnd()).toMatchObject({
      status: 'paused',
      runId: paused.runId,
      waiting: [{ toolCallId: 'pay', approvalId: 'pay', tool: 'pay', needs: 'approval' }],
    });
    expect(await second.chat.send({ id: 'm2', text: 'still there?' }, now)).toMatchObject({
      disposition: 'queued',
    });
    expect(second.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: paused.runId });
    expect(openRuns(await second.chat.runs()).map((run) => run.runId)).toEqual([paused.runId]);
    await second.chat.approvePlan({ runId: paused.runId, stepIds: ['pay'] });
    expect(await second.chat.waitForEnd()).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'after restart', messageIds: ['m2'] },
    });
    await second.close();
  });
});

describe('a paused plan restored from a stale snapshot', () => {
  it('finds what the plan waits for in its events when the snapshot predates the pause', async () => {
    const ledger = createMemoryLedger();
    const first = start(ledger);
    const paused = await first.chat.executePlan(payPlan);
    await first.close();
    // A crash before the session's snapshot recorded the pause: the snapshot knows no plan.
    const { record } = await ledger.loadSession('web:1');
    const snapshot = record?.snapshot as { context: Record<string, unknown> };
    await ledger.putSession({
      ...(record as NonNullable<typeof record>),
      snapshot: { ...snapshot, value: { idle: 'empty' }, context: { ...snapshot.context, plans: [] } },
    });

    const second = start(ledger, undefined, 'p2');
    expect(await second.chat.waitForEnd()).toMatchObject({
      status: 'paused',
      runId: paused.runId,
      waiting: [{ toolCallId: 'pay', approvalId: 'pay', tool: 'pay', needs: 'approval' }],
    });
    expect(await second.chat.send({ id: 'm3', text: 'hi' }, now)).toMatchObject({ disposition: 'queued' });
    await second.close();
  });
});
