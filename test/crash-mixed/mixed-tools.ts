import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool, type ToolContext } from '../../src/index.js';
import { systemClock } from '../../src/public/clock.js';
import { type ModelRequest } from '../../src/public/providers.js';
import type { ScriptEntry, ScriptedToolCall } from '../../src/testing/index.js';
import type { SideRecord } from './mixed-protocol.js';

/** Appends side records; one synchronous write a line, so a record written is a record kept across a SIGKILL. */
export function createSideLog(sidePath: string, child: string) {
  return (kind: SideRecord['kind'], tool: string, context: Omit<ToolContext, 'signal'>): void => {
    const { sessionKey, runId, toolCallId } = context;
    const record: SideRecord = { kind, tool, sessionKey, runId, toolCallId, child };
    appendFileSync(sidePath, `${JSON.stringify(record)}\n`);
  };
}
type SideLog = ReturnType<typeof createSideLog>;

/**
 * The workload's tools: `record` (low risk, sleeps a little), `refund` (high risk: needs the operator's approval)
 * and `lookup` (deferred: the operator supplies its result). Both tools that execute write their side record first.
 */
export function createTools(side: SideLog) {
  const record = defineTool({
    name: 'record',
    description: 'Record a note after some work',
    input: z.object({ note: z.string(), ms: z.number().int().min(0).default(0) }),
    execute: async ({ note, ms }, context) => {
      side('executed', 'record', context);
      await systemClock.sleep(ms, context.signal);
      return { note };
    },
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an amount',
    risk: 'high',
    input: z.object({ amount: z.number() }),
    execute: ({ amount }, context) => {
      side('executed', 'refund', context);
      return { refunded: amount };
    },
  });
  const lookup = defineTool({
    name: 'lookup',
    description: 'Look something up in a system outside the bot',
    input: z.object({ query: z.string() }),
  });
  return [record, refund, lookup];
}

/**
 * The scripted model of the workload: a user turn asks for `refund` (approval) or `lookup` (deferred), either with a
 * `record` sibling half the time, or for one to three `record` calls, or is answered in a few words; a tool result
 * is mostly answered. Call ids are unique across the whole test (`<child label>-c<n>`), so side records can be
 * matched to the ledger. Tokens stream on the real clock.
 */
export function createScript(random: () => number, label: string) {
  const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));
  let calls = 0;
  const callId = (): string => `${label}-c${++calls}`;
  const answer = (): ScriptEntry => ({
    text: Array.from({ length: between(3, 10) }, (_, index) => `word${index}`).join(' '),
    tokenDelayMs: between(2, 6),
  });
  const records = (count: number): ScriptEntry => ({
    toolCalls: Array.from({ length: count }, () => ({
      id: callId(),
      name: 'record',
      args: { note: `n${calls}`, ms: between(0, 25) },
    })),
    tokenDelayMs: between(2, 6),
  });
  return (request: ModelRequest): ScriptEntry => {
    const last = request.messages[request.messages.length - 1];
    const roll = random();
    if (last?.role === 'tool') return roll < 0.1 ? records(1) : answer();
    // Half the paused batches carry a `record` sibling that runs before the pause and must not run again on resume.
    const sibling = (): ScriptedToolCall[] =>
      random() < 0.5
        ? [{ id: callId(), name: 'record', args: { note: `n${calls}`, ms: between(0, 10) } }]
        : [];
    if (roll < 0.1)
      return {
        toolCalls: [{ id: callId(), name: 'refund', args: { amount: between(1, 99) } }, ...sibling()],
      };
    if (roll < 0.18)
      return { toolCalls: [...sibling(), { id: callId(), name: 'lookup', args: { query: `q${calls}` } }] };
    if (roll < 0.4) return records(between(1, 3));
    return answer();
  };
}

/** A plan of three `record` steps (the third uses the first's result), plus a `refund` step when `risky`. */
export function createPlan(id: string, risky: boolean) {
  const steps = [
    { id: 'first', tool: 'record', args: { note: `${id}-first`, ms: 5 } },
    { id: 'second', tool: 'record', args: { note: `${id}-second`, ms: 5 }, dependsOn: ['first'] },
    { id: 'third', tool: 'record', args: { note: '$first.note', ms: 5 } },
  ];
  const refund = { id: 'pay', tool: 'refund', args: { amount: 5 }, dependsOn: ['second'] };
  return { steps: risky ? [...steps, refund] : steps };
}
