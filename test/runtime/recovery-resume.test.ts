import { beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger, type RuntimeOptions } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type ScriptEntry } from 'agentlanes/testing';
import { countingTool as countingToolOf, crashableProcess, ofType } from '../support/crash-process.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const tempDb = (): string => tempLedgerPath('resume');

// Shared by every "process" of a test: run ids must not repeat across a restart.
let ids = sequentialIds();
beforeEach(() => {
  ids = sequentialIds();
});

/** How many times each tool started, across every "process" of a test. */
let starts = new Map<string, number>();
beforeEach(() => {
  starts = new Map();
});
const countingTool = (name: string, options: { idempotent?: boolean; hangs?: boolean; risk?: 'high' } = {}) =>
  countingToolOf(starts, name, options);

type Extra = Pick<RuntimeOptions, 'tools' | 'limits' | 'recovery'>;

/**
 * A "process": a runtime on the file with its own fake clock. `crash()` abandons it as a crash would: its ledger
 * is closed under it (what was committed stays, nothing more is written), the runtime is never closed.
 */
function processOn(path: string, script: ScriptEntry[], now: number, extra: Extra = {}) {
  const clock = fakeClock({ now });
  const ledger = createSqliteLedger({ path });
  const model = scriptedModel(script, { clock });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
    blocks: { minChars: 1, maxChars: 8 },
    clock,
    ids,
    onError: () => undefined,
    ...extra,
  });
  return { ...crashableProcess({ runtime, ledger, clock, sessionKey: 'telegram:1' }), model };
}

describe('createRuntime (resume after a crash)', () => {
  it('resumes a run cut mid-stream under the same run id: the model call is made again and blocks number on', async () => {
    const path = tempDb();
    const a = processOn(path, [{ text: 'one two three four five six', tokenDelayMs: 100 }], 0);
    await a.chat.send({ id: 'm1', text: 'first' });
    await a.chat.send({ id: 'm2', text: 'second' });
    await a.clock.advance(250);
    const blocksBefore = ofType(a.events, 'assistant.block').map((event) => event.index);
    expect(blocksBefore.length).toBeGreaterThan(0);
    await a.crash();

    const b = processOn(path, [{ text: 'the whole answer' }, { text: 'answer two' }], 50_000);
    await b.clock.advance(0);
    await b.clock.advance(100);
    const runs = await b.chat.runs();
    expect(runs.map((run) => [run.runId, run.status, run.messageIds])).toEqual([
      ['run_1', 'completed', ['m1']],
      ['run_2', 'completed', ['m2']],
    ]);
    expect(runs[0]?.text).toBe('the whole answer');
    expect(ofType(b.events, 'run.resumed')).toMatchObject([{ runId: 'run_1', attempt: 1, reason: 'crash' }]);
    // The partial text is not in the prompt: the interrupted call is made again on the durable transcript.
    expect(b.model.requests[0]?.messages).toEqual([{ role: 'user', content: 'first' }]);
    // b.events replays the first process's events too: the blocks after the resume number on after its last.
    const resumedAt = ofType(b.events, 'run.resumed')[0]?.cursor ?? Infinity;
    const blocks = ofType(b.events, 'assistant.block').filter((event) => event.runId === 'run_1');
    expect(blocks.filter((event) => event.cursor < resumedAt).map((event) => event.index)).toEqual(
      blocksBefore,
    );
    const after = blocks.filter((event) => event.cursor > resumedAt).map((event) => event.index);
    expect(after[0]).toBe(Math.max(...blocksBefore) + 1);
    expect(new Set(blocks.map((event) => event.blockId)).size).toBe(blocks.length);
    expect(ofType(b.events, 'run.ended').filter((event) => event.status === 'crashed')).toEqual([]);
    await b.close();
  });

  it('closes the run crashed once its resumes are spent, and reports it with run.ended', async () => {
    const path = tempDb();
    const slow: ScriptEntry = { text: 'never finishes in time', tokenDelayMs: 1000 };
    const a = processOn(path, [slow], 0);
    await a.chat.send({ id: 'm1', text: 'first' });
    await a.clock.advance(10);
    await a.crash();
    for (const [attempt, now] of [
      [1, 10_000],
      [2, 20_000],
    ] as const) {
      const next = processOn(path, [slow], now);
      await next.clock.advance(10);
      expect(ofType(next.events, 'run.resumed').at(-1)).toMatchObject({ runId: 'run_1', attempt });
      await next.crash();
    }
    const last = processOn(path, [{ text: 'unused' }], 30_000);
    await last.clock.advance(0);
    expect((await last.chat.runs()).map((run) => run.status)).toEqual(['crashed']);
    expect(ofType(last.events, 'run.resumed')).toHaveLength(2);
    expect(ofType(last.events, 'run.ended')).toMatchObject([{ runId: 'run_1', status: 'crashed' }]);
    expect(last.model.requests).toEqual([]);
    await last.close();
  });

  it('closes a run older than maxAgeMs crashed instead of resuming it', async () => {
    const path = tempDb();
    const a = processOn(path, [{ text: 'slow words here', tokenDelayMs: 1000 }], 0);
    await a.chat.send({ id: 'm1', text: 'first' });
    await a.clock.advance(10);
    await a.crash();
    const b = processOn(path, [{ text: 'unused' }], 50_000, { recovery: { maxAgeMs: 49_999 } });
    await b.clock.advance(0);
    expect((await b.chat.runs()).map((run) => run.status)).toEqual(['crashed']);
    expect(ofType(b.events, 'run.resumed')).toEqual([]);
    expect(b.model.requests).toEqual([]);
    await b.close();
  });

  it('pauses a run whose tool call was cut in doubt, never starting it again on its own', async () => {
    const path = tempDb();
    const tools = [countingTool('pay', { hangs: true })];
    const a = processOn(path, [{ toolCalls: [{ id: 'c1', name: 'pay', args: { n: 1 } }] }], 0, { tools });
    await a.chat.send({ id: 'm1', text: 'pay it' });
    await a.clock.advance(10);
    expect(starts.get('pay')).toBe(1);
    await a.crash();

    const b = processOn(path, [{ text: 'unused' }], 50_000, { tools: [countingTool('pay')] });
    await b.clock.advance(10);
    expect(starts.get('pay')).toBe(1);
    expect(b.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    expect(ofType(b.events, 'tool.in_doubt')).toMatchObject([
      { runId: 'run_1', toolCallId: 'c1', tool: 'pay' },
    ]);
    expect(await b.chat.waitForEnd({ timeoutMs: 100 })).toMatchObject({
      status: 'paused',
      waiting: [{ toolCallId: 'c1', needs: 'approval', inDoubt: true }],
    });
    await b.crash();

    // It survives a restart still paused; rejecting tells the model the outcome is unknown.
    const c = processOn(path, [{ text: 'I could not tell whether it was paid.' }], 60_000, {
      tools: [countingTool('pay')],
    });
    await c.clock.advance(0);
    expect(c.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    await c.chat.approve({ toolCallId: 'c1', decision: 'reject' });
    await c.clock.advance(10);
    expect(starts.get('pay')).toBe(1);
    const toolMessage = c.model.requests[0]?.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', toolCallId: 'c1' });
    expect(toolMessage?.content).toContain('outcome of this call is unknown');
    expect((await c.chat.runs()).map((run) => [run.runId, run.status])).toEqual([['run_1', 'completed']]);
    await c.close();
  });

  it('runs an in-doubt call again when an operator approves it, or takes the outcome they supply', async () => {
    for (const answer of ['approve', 'supply'] as const) {
      const path = tempDb();
      const tools = [countingTool('pay', { hangs: true })];
      const a = processOn(path, [{ toolCalls: [{ id: 'c1', name: 'pay', args: { n: 1 } }] }], 0, { tools });
      await a.chat.send({ id: 'm1', text: 'pay it' });
      await a.clock.advance(10);
      await a.crash();
      starts.clear();
      const b = processOn(path, [{ text: 'done' }], 50_000, { tools: [countingTool('pay')] });
      await b.clock.advance(0);
      if (answer === 'approve') await b.chat.approve({ toolCallId: 'c1', decision: 'approve' });
      else await b.chat.supplyToolResult({ toolCallId: 'c1', output: { paid: 'yes' } });
      await b.clock.advance(10);
      expect(starts.get('pay')).toBe(answer === 'approve' ? 1 : undefined);
      const content = b.model.requests[0]?.messages.at(-1)?.content;
      expect(content).toBe(answer === 'approve' ? '{"done":1}' : '{"paid":"yes"}');
      expect((await b.chat.runs()).map((run) => run.status)).toEqual(['completed']);
      await b.close();
    }
  });

  it('refuses an approval given before the crash for the call asked again in doubt: it runs twice only when the new request is approved', async () => {
    const path = tempDb();
    const a = processOn(path, [{ toolCalls: [{ id: 'c1', name: 'refund', args: { n: 5 } }] }], 0, {
      tools: [countingTool('refund', { risk: 'high', hangs: true })],
    });
    await a.chat.send({ id: 'm1', text: 'refund it' });
    await a.clock.advance(10);
    const first = ofType(a.events, 'approval.requested');
    expect(first).toMatchObject([{ toolCallId: 'c1', approvalId: 'c1' }]);
    await a.chat.approve({ toolCallId: 'c1', approvalId: 'c1', decision: 'approve' });
    await a.clock.advance(10);
    expect(starts.get('refund')).toBe(1);
    await a.crash();

    const tools = [countingTool('refund', { risk: 'high' })];
    const b = processOn(path, [{ text: 'unused' }], 50_000, { tools });
    await b.clock.advance(10);
    // The run paused on the cut call as a new request, at the time it was asked again.
    const asked = ofType(b.events, 'approval.requested').at(-1);
    expect(ofType(b.events, 'tool.in_doubt')).toMatchObject([{ toolCallId: 'c1', approvalId: 'c1~50000' }]);
    expect(asked).toMatchObject({ toolCallId: 'c1', approvalId: 'c1~50000' });
    // The first request's event, re-delivered to an at-least-once consumer, is answered: refused, nothing runs.
    await expect(
      b.chat.approve({ toolCallId: 'c1', approvalId: 'c1', decision: 'approve' }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await b.clock.advance(10);
    expect(starts.get('refund')).toBe(1);
    expect(b.chat.status()).toMatchObject({ state: 'awaiting_approval', runId: 'run_1' });
    await b.crash();

    // Across another restart the pause keeps the request's id (from the recorded call).
    const c = processOn(path, [{ text: 'refunded again' }], 60_000, { tools });
    await c.clock.advance(0);
    expect(await c.chat.waitForEnd({ timeoutMs: 100 })).toMatchObject({
      status: 'paused',
      waiting: [{ toolCallId: 'c1', approvalId: 'c1~50000', inDoubt: true }],
    });
    expect((await c.runtime.pendingCalls()).map((call) => [call.toolCallId, call.approvalId])).toEqual([
      ['c1', 'c1~50000'],
    ]);
    await expect(
      c.chat.approve({ toolCallId: 'c1', approvalId: 'c1', decision: 'approve' }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await c.chat.approve({ toolCallId: 'c1', approvalId: 'c1~50000', decision: 'approve' });
    await c.clock.advance(10);
    expect(starts.get('refund')).toBe(2);
    expect((await c.chat.runs()).map((run) => [run.runId, run.status])).toEqual([['run_1', 'completed']]);
    await c.close();
  });

  it('runs a cut call of an idempotent tool again on its own, and a call that never started once', async () => {
    const path = tempDb();
    const script: ScriptEntry[] = [
      {
        toolCalls: [
          { id: 'c1', name: 'lookup', args: { n: 1 } },
          { id: 'c2', name: 'later', args: { n: 2 } },
        ],
      },
    ];
    const tools = [countingTool('lookup', { idempotent: true, hangs: true }), countingTool('later')];
    const a = processOn(path, script, 0, { tools, limits: { parallelToolCalls: 1 } });
    await a.chat.send({ id: 'm1', text: 'look it up' });
    await a.clock.advance(10);
    await a.crash();
    expect([starts.get('lookup'), starts.get('later')]).toEqual([1, undefined]);
    starts.clear();
    const b = processOn(path, [{ text: 'found' }], 50_000, {
      tools: [countingTool('lookup', { idempotent: true }), countingTool('later')],
    });
    await b.clock.advance(10);
    expect((await b.chat.runs()).map((run) => [run.runId, run.status])).toEqual([['run_1', 'completed']]);
    expect([starts.get('lookup'), starts.get('later')]).toEqual([1, 1]);
    expect(b.model.requests[0]?.messages.slice(-2).map((message) => message.content)).toEqual([
      '{"done":1}',
      '{"done":2}',
    ]);
    await b.close();
  });
});
