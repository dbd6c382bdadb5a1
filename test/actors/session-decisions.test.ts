import { describe, expect, it } from 'vitest';
import { decideInto, previewDecision } from '../../src/actors/operator-answers.js';
import type { SessionEmitted } from '../../src/actors/session-context.js';
import type { PausedCallInfo } from '../../src/runner/run-request.js';
import { admitMessage, bareSession } from '../support/session-actor.js';

/** A session actor whose run paused on `calls` (started by a message, paused by the test). */
async function pausedOn(calls: readonly PausedCallInfo[]) {
  const { clock, runs, actor } = bareSession();
  const emitted: SessionEmitted[] = [];
  actor.on('*', (event) => emitted.push(event));
  actor.start();
  admitMessage(actor, 'm1');
  const run = runs[0];
  if (run === undefined) throw new Error('no run started');
  const runId = run.request.run.runId;
  const state = calls.some((call) => call.needs === 'approval')
    ? 'awaiting_approval'
    : 'awaiting_tool_results';
  run.finish({ runId, state, calls, at: 1000 });
  await clock.advance(0);
  emitted.length = 0;
  return { actor, runs, runId, emitted };
}

const refund = { toolCallId: 'c1', tool: 'refund', needs: 'approval', turn: 1, position: 0 } as const;
const lookup = { toolCallId: 'c2', tool: 'lookup', needs: 'deferred', turn: 1, position: 1 } as const;

describe('answers to waiting calls, decided by the session machine (DECIDE)', () => {
  it('settles an approval, then waits for the deferred result, then runs on: the pause state after each', async () => {
    const { actor, runs, runId, emitted } = await pausedOn([refund, lookup]);
    expect(actor.getSnapshot().value).toBe('awaiting_approval');
    expect(decideInto(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' })).toEqual({
      state: 'awaiting_tool_results',
    });
    expect(actor.getSnapshot().value).toBe('awaiting_tool_results');
    expect(emitted).toEqual([
      {
        type: 'call.answered',
        call: { runId, toolCallId: 'c1', tool: 'refund', turn: 1, position: 0 },
        state: 'awaiting_tool_results',
      },
    ]);
    expect(decideInto(actor, { type: 'DECIDE', toolCallId: 'c2', answer: 'deferred' })).toEqual({});
    expect(actor.getSnapshot().value).toBe('running');
    expect(runs).toHaveLength(2);
    expect(runs[1]?.request.run).toMatchObject({ runId, resume: { from: 'awaiting_tool_results' } });
  });

  it('refuses an unknown id (not_found), the other kind of answer and a second answer (invalid_input), changing nothing', async () => {
    const { actor, emitted } = await pausedOn([refund, lookup]);
    const before = actor.getSnapshot().context;
    const refusals = [
      [
        { toolCallId: 'c9', answer: 'approval' },
        'not_found',
        'approve: no tool call "c9" is waiting in session "chat:1"',
      ],
      [
        { toolCallId: 'c1', answer: 'deferred' },
        'invalid_input',
        'supplyToolResult: tool call "c1" waits for approve()',
      ],
      [
        { toolCallId: 'c2', answer: 'approval' },
        'invalid_input',
        'approve: tool call "c2" waits for supplyToolResult()',
      ],
    ] as const;
    for (const [answer, code, message] of refusals) {
      expect(() => previewDecision(actor, { type: 'DECIDE', ...answer })).toThrow(
        expect.objectContaining({ code, message }),
      );
      expect(() => decideInto(actor, { type: 'DECIDE', ...answer })).toThrow(
        expect.objectContaining({ code, message }),
      );
    }
    expect(actor.getSnapshot().context).toBe(before);
    expect(emitted.map((event) => event.type)).toEqual([
      'decision.refused',
      'decision.refused',
      'decision.refused',
    ]);
    decideInto(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' });
    expect(() => decideInto(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' })).toThrow(
      expect.objectContaining({
        code: 'invalid_input',
        message: 'approve: tool call "c1" was already settled',
      }),
    );
  });

  it('previews an answer without changing anything, and refuses every answer when no run is paused', async () => {
    const { actor, emitted } = await pausedOn([refund]);
    const before = actor.getSnapshot();
    expect(previewDecision(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' })).toMatchObject({
      toolCallId: 'c1',
      tool: 'refund',
    });
    expect(actor.getSnapshot()).toBe(before);
    expect(emitted).toEqual([]);
    decideInto(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' });
    expect(actor.getSnapshot().value).toBe('running');
    expect(() => previewDecision(actor, { type: 'DECIDE', toolCallId: 'c1', answer: 'approval' })).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});
