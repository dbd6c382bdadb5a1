import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  createSqliteLedger,
  type Ledger,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { countingTool as countingToolOf, crashableProcess, ofType } from '../support/crash-process.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const tempDb = (): string => tempLedgerPath('plan-resume');

// Shared by every "process" of a test: run ids must not repeat across a restart.
let ids = sequentialIds();
/** How many times each tool started, across every "process" of a test. */
let starts = new Map<string, number>();
beforeEach(() => {
  ids = sequentialIds();
  starts = new Map();
});
const countingTool = (name: string, options: { idempotent?: boolean; hangs?: boolean } = {}) =>
  countingToolOf(starts, name, options);

/** A ledger whose event log stops taking writes at the start of step `stepId` (so that start never commits). */
function stallingAt(ledger: Ledger, stepId: string): Ledger {
  let stalled = false;
  return Object.assign(Object.create(ledger) as Ledger, {
    appendEvents: (events: readonly RuntimeEvent[]) => {
      stalled ||= events.some((event) => event.type === 'tool.called' && event.stepId === stepId);
      return stalled ? new Promise<void>(() => undefined) : ledger.appendEvents(events);
    },
  });
}

type Extra = Pick<RuntimeOptions, 'tools' | 'recovery'> & { stallAt?: string };

/** A "process" on the file with its own fake clock; `crash()` abandons it (ledger closed under it, never closed). */
function processOn(path: string, now: number, extra: Extra = {}) {
  const clock = fakeClock({ now });
  const file = createSqliteLedger({ path });
  const { stallAt, ...options } = extra;
  const runtime = createRuntime({
    ledger: stallAt === undefined ? file : stallingAt(file, stallAt),
    providers: { scripted: scriptedModel([], { clock }) },
    model: { provider: 'scripted', model: 'm' },
    clock,
    ids,
    onError: () => undefined,
    ...options,
  });
  return crashableProcess({ runtime, ledger: file, clock, sessionKey: 'telegram:1' });
}

const twoSteps = {
  steps: [
    { id: 'a', tool: 'first', args: { n: 1 } },
    { id: 'b', tool: 'second', args: { n: 2 }, dependsOn: ['a'] },
  ],
};

/** Start the two-step plan in a process that is cut while step b runs (its tool hangs there). */
async function cutInStepB(path: string, second: { idempotent?: boolean }) {
  const a = processOn(path, 0, {
    tools: [countingTool('first'), countingTool('second', { ...second, hangs: true })],
  });
  void a.chat.executePlan(twoSteps).catch(() => undefined);
  await a.clock.advance(10);
  expect([starts.get('first'), starts.get('second')]).toEqual([1, 1]);
  await a.crash();
}

const stepsOf = (runs: readonly { runId: string; status: string }[]) =>
  runs.map((run) => [run.runId, run.status]);

describe('createRuntime (a plan run resumes after a crash)', () => {
  it('resumes a plan cut between steps under the same run id, each step run once', async () => {
    const path = tempDb();
    const tools = [countingTool('first'), countingTool('second')];
    const a = processOn(path, 0, { tools, stallAt: 'b' });
    void a.chat.executePlan(twoSteps).catch(() => undefined);
    await a.clock.advance(10);
    expect([starts.get('first'), starts.get('second')]).toEqual([1, undefined]);
    await a.crash();

    const b = processOn(path, 50_000, { tools });
    await b.clock.advance(10);
    expect(stepsOf(await b.chat.runs())).toEqual([['run_1', 'completed']]);
    expect([starts.get('first'), starts.get('second')]).toEqual([1, 1]);
    expect(ofType(b.events, 'run.resumed')).toMatchObject([{ runId: 'run_1', attempt: 1, reason: 'crash' }]);
    expect(ofType(b.events, 'tool.in_doubt')).toEqual([]);
    await b.close();
  });

  it('holds a step cut while its tool ran in doubt across a restart, and runs it once more on approval', async () => {
    const path = tempDb();
    await cutInStepB(path, {});
    const tools = [countingTool('first'), countingTool('second')];
    const b = processOn(path, 50_000, { tools });
    await b.clock.advance(10);
    expect([starts.get('first'), starts.get('second')]).toEqual([1, 1]);
    expect(b.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    expect(ofType(b.events, 'tool.in_doubt')).toMatchObject([
      { runId: 'run_1', toolCallId: 'b', tool: 'second', stepId: 'b' },
    ]);
    expect(ofType(b.events, 'approval.requested').at(-1)).toMatchObject({ runId: 'run_1', stepId: 'b' });
    await b.crash();

    const c = processOn(path, 60_000, { tools });
    await c.clock.advance(10);
    expect(c.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    expect(starts.get('second')).toBe(1);
    const result = await c.chat.approvePlan({ runId: 'run_1', stepIds: ['b'] });
    expect(result.status).toBe('completed');
    expect(result.results.map((step) => [step.stepId, step.success, step.data])).toEqual([
      ['a', true, { done: 1 }],
      ['b', true, { done: 2 }],
    ]);
    expect([starts.get('first'), starts.get('second')]).toEqual([1, 2]);
    await c.close();
  });

  it('refuses an answer to the request a step had before the crash once it waits in doubt: it runs again only through the new one', async () => {
    const path = tempDb();
    await cutInStepB(path, {});
    const tools = [countingTool('first'), countingTool('second')];
    const b = processOn(path, 50_000, { tools });
    await b.clock.advance(10);
    expect(ofType(b.events, 'tool.in_doubt')).toMatchObject([{ stepId: 'b', approvalId: 'b~1' }]);
    expect(ofType(b.events, 'approval.requested').at(-1)).toMatchObject({ stepId: 'b', approvalId: 'b~1' });
    // An at-least-once consumer answering the step's first request again (approval id "b") changes nothing.
    await expect(
      b.chat.approvePlan({ runId: 'run_1', stepIds: ['b'], approvalIds: ['b'] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    // Naming the request of another step than the one decided is refused too.
    await expect(
      b.chat.approvePlan({ runId: 'run_1', reject: ['a'], approvalIds: ['b~1'] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    expect(starts.get('second')).toBe(1);
    await b.crash();

    // Restored paused, the step keeps its request's id.
    const c = processOn(path, 60_000, { tools });
    await c.clock.advance(10);
    expect(await c.chat.waitForEnd({ timeoutMs: 100 })).toMatchObject({
      status: 'paused',
      waiting: [{ toolCallId: 'b', approvalId: 'b~1' }],
    });
    expect((await c.runtime.pendingCalls()).map((call) => call.approvalId)).toEqual(['b~1']);
    await expect(
      c.chat.approvePlan({ runId: 'run_1', stepIds: ['b'], approvalIds: ['b'] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    const result = await c.chat.approvePlan({ runId: 'run_1', stepIds: ['b'], approvalIds: ['b~1'] });
    expect(result.status).toBe('completed');
    expect([starts.get('first'), starts.get('second')]).toEqual([1, 2]);
    await c.close();
  });

  it('fails a step in doubt with outcome unknown when the operator rejects it', async () => {
    const path = tempDb();
    await cutInStepB(path, {});
    const b = processOn(path, 50_000, { tools: [countingTool('first'), countingTool('second')] });
    await b.clock.advance(10);
    const result = await b.chat.approvePlan({ runId: 'run_1', reject: ['b'] });
    expect(result.status).toBe('failed');
    expect(result.results[1]).toMatchObject({ stepId: 'b', success: false, error: { code: 'tool_failed' } });
    expect(result.results[1]?.error?.message).toContain('outcome of this step is unknown');
    expect(starts.get('second')).toBe(1);
    expect(stepsOf(await b.chat.runs())).toEqual([['run_1', 'failed']]);
    await b.close();
  });

  it('records the outcome the operator supplies for a step in doubt, never running it again', async () => {
    const path = tempDb();
    await cutInStepB(path, {});
    const b = processOn(path, 50_000, { tools: [countingTool('first'), countingTool('second')] });
    await b.clock.advance(10);
    // Only a step in doubt may be supplied: step a ran to its end.
    await expect(
      b.chat.approvePlan({ runId: 'run_1', supply: [{ stepId: 'a', output: { done: 'by hand' } }] }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    expect(b.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    const result = await b.chat.approvePlan({
      runId: 'run_1',
      supply: [{ stepId: 'b', output: { done: 'by hand' } }],
    });
    expect(result.status).toBe('completed');
    expect(result.results.map((step) => [step.stepId, step.success, step.data])).toEqual([
      ['a', true, { done: 1 }],
      ['b', true, { done: 'by hand' }],
    ]);
    expect(starts.get('second')).toBe(1);
    expect(stepsOf(await b.chat.runs())).toEqual([['run_1', 'completed']]);
    await b.close();
  });

  it('holds its session until the resumed plan ended: a message queued behind it runs after it, never beside it', async () => {
    const path = tempDb();
    const a = processOn(path, 0, {
      tools: [countingTool('first'), countingTool('second', { idempotent: true, hangs: true })],
    });
    void a.chat.executePlan(twoSteps).catch(() => undefined);
    await a.clock.advance(10);
    expect(starts.get('second')).toBe(1);
    // Admitted while the plan holds the session: it waits behind the plan.
    expect(await a.chat.send({ id: 'm1', text: 'while the plan runs' })).toMatchObject({ messageId: 'm1' });
    expect(await a.chat.runs()).toHaveLength(1);
    await a.crash();

    const b = processOn(path, 50_000, {
      tools: [countingTool('first'), countingTool('second', { idempotent: true })],
    });
    await b.clock.advance(10_000);
    const planEnded = b.events.findIndex((event) => event.type === 'run.ended' && event.runId === 'run_1');
    const messageRun = b.events.findIndex((event) => event.type === 'run.started' && event.runId !== 'run_1');
    expect(planEnded).toBeGreaterThanOrEqual(0);
    expect(messageRun).toBeGreaterThan(planEnded);
    expect(stepsOf(await b.chat.runs())[0]).toEqual(['run_1', 'completed']);
    await b.close();
  });

  it('resumes an agent run and a plan run a crash cut in the same session, both to their end', async () => {
    const path = tempDb();
    await cutInStepB(path, { idempotent: true });
    // An agent run of the same session open at the crash too (a plan handed to a busy session before its run).
    const file = createSqliteLedger({ path });
    const usage = { inputTokens: 0, outputTokens: 0 };
    await file.appendMessage({
      sessionKey: 'telegram:1',
      messageId: 'm9',
      order: 99,
      text: 'cut as well',
      mode: 'followup',
      status: 'consumed',
      acceptedAt: 5,
    });
    await file.openRun({
      runId: 'run_cut',
      sessionKey: 'telegram:1',
      messageIds: ['m9'],
      provider: 'scripted',
      model: 'm',
      startedAt: 6,
      status: 'running',
      usage,
      text: '',
    });
    await file.close();
    // The plan run was opened after the agent run (recovery meets them in that order).
    const db = new Database(path);
    db.prepare("UPDATE runs SET rowid = (SELECT max(rowid) + 1 FROM runs) WHERE run_id = 'run_1'").run();
    expect(
      db.prepare("SELECT run_id FROM runs WHERE status = 'running' ORDER BY rowid").pluck().all(),
    ).toEqual(['run_cut', 'run_1']);
    db.close();
    const b = processOn(path, 50_000, {
      tools: [countingTool('first'), countingTool('second', { idempotent: true })],
    });
    await b.clock.advance(10_000);
    const statuses = new Map(stepsOf(await b.chat.runs()).map(([runId, status]) => [runId, status]));
    expect(statuses.get('run_1')).toBe('completed');
    expect(statuses.get('run_cut')).not.toBe('running');
    expect(
      b.events
        .filter((event) => event.type === 'run.resumed')
        .map((event) => event.runId)
        .sort(),
    ).toEqual(['run_1', 'run_cut']);
    await b.close();
  });

  it('runs a step of an idempotent tool that was cut again on its own', async () => {
    const path = tempDb();
    await cutInStepB(path, { idempotent: true });
    const b = processOn(path, 50_000, {
      tools: [countingTool('first'), countingTool('second', { idempotent: true })],
    });
    await b.clock.advance(10);
    expect(stepsOf(await b.chat.runs())).toEqual([['run_1', 'completed']]);
    expect([starts.get('first'), starts.get('second')]).toEqual([1, 2]);
    expect(ofType(b.events, 'tool.in_doubt')).toEqual([]);
    await b.close();
  });

  it('closes the plan run crashed once its resumes are spent', async () => {
    const path = tempDb();
    await cutInStepB(path, { idempotent: true });
    const hanging = {
      tools: [countingTool('first'), countingTool('second', { idempotent: true, hangs: true })],
    };
    for (const [attempt, now] of [
      [1, 10_000],
      [2, 20_000],
    ] as const) {
      const next = processOn(path, now, hanging);
      await next.clock.advance(10);
      expect(ofType(next.events, 'run.resumed').at(-1)).toMatchObject({ runId: 'run_1', attempt });
      await next.crash();
    }
    expect(starts.get('second')).toBe(3);
    const last = processOn(path, 30_000, hanging);
    await last.clock.advance(10);
    expect(stepsOf(await last.chat.runs())).toEqual([['run_1', 'crashed']]);
    expect(ofType(last.events, 'run.ended')).toMatchObject([{ runId: 'run_1', status: 'crashed' }]);
    expect(starts.get('second')).toBe(3);
    await last.close();
  });

  it('closes a plan run crashed with crashedRuns close', async () => {
    const path = tempDb();
    await cutInStepB(path, {});
    const b = processOn(path, 50_000, {
      tools: [countingTool('first'), countingTool('second')],
      recovery: { crashedRuns: 'close' },
    });
    await b.clock.advance(10);
    expect(stepsOf(await b.chat.runs())).toEqual([['run_1', 'crashed']]);
    expect(starts.get('second')).toBe(1);
    await b.close();
  });
});
