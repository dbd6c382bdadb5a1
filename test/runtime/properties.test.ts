import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, defineTool, type RuntimeEvent, type SendResult } from 'agentlanes';
import { type ModelRequest } from 'agentlanes/providers';
import type { FakeClock } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

const allModes = ['followup', 'collect', 'steer', 'steer-backlog', 'interrupt'] as const;
type Mode = (typeof allModes)[number];

type Action =
  | { kind: 'send'; session: number; mode: Mode; repeat: number | null; gap: number }
  | { kind: 'abort'; session: number; gap: number };

/** What one model call does: maybe ask for the `wait` tool (at most once in a row), streaming `delay` apart. */
interface CallPlan {
  tool: boolean;
  delay: number;
  toolMs: number;
}

interface Sent {
  key: string;
  id: string;
  mode: Mode;
  result: SendResult;
}

const gap = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 60 }) },
);
/** Mostly a fresh id; sometimes the id of an earlier send (a redelivery, in this or another session). */
const repeat = fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() });
const action = (modes: readonly Mode[]): fc.Arbitrary<Action> =>
  fc.oneof(
    {
      weight: 9,
      arbitrary: fc.record({
        kind: fc.constant('send' as const),
        session: fc.nat(4),
        mode: fc.constantFrom(...modes),
        repeat,
        gap,
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('abort' as const), session: fc.nat(4), gap }) },
  );
const plans = fc.array(
  fc.record({
    tool: fc.boolean(),
    delay: fc.integer({ min: 0, max: 20 }),
    toolMs: fc.integer({ min: 0, max: 40 }),
  }),
  { minLength: 1, maxLength: 8 },
);

/** The scripted model: plan `callIndex` (cycling); never a tool twice in a row, so runs always end. */
function scriptOf(callPlans: readonly CallPlan[]) {
  return (request: ModelRequest, callIndex: number) => {
    const plan = callPlans[callIndex % callPlans.length] as CallPlan;
    if (plan.tool && request.messages.at(-1)?.role !== 'tool') {
      return {
        text: 'waiting',
        toolCalls: [{ name: 'wait', args: { ms: plan.toolMs } }],
        tokenDelayMs: plan.delay,
      };
    }
    return { text: 'an answer of six words', tokenDelayMs: plan.delay };
  };
}

/** Play the actions on a fresh runtime, then let time run until every session is idle and empty. */
async function play(
  sessions: number,
  actions: readonly Action[],
  callPlans: readonly CallPlan[],
  cap: number,
) {
  const clock: { current?: FakeClock } = {}; // the harness makes the clock; the tool is made first
  const wait = defineTool({
    name: 'wait',
    description: 'Wait a while',
    input: z.object({ ms: z.number() }),
    execute: async ({ ms }, { signal }) => (clock.current as FakeClock).sleep(ms, signal),
  });
  const ledger = createMemoryLedger();
  const h = createHarness(scriptOf(callPlans), {
    ledger,
    tools: [wait],
    queue: { debounceMs: 30, maxWaitMs: 120, cap, drop: 'summarize' },
  });
  clock.current = h.clock;
  const keys = Array.from({ length: sessions }, (_, index) => `chat:${index}`);
  const sent: Sent[] = [];
  for (const [index, step] of actions.entries()) {
    const key = keys[step.session % sessions] as string;
    const chat = h.runtime.session(key);
    if (step.kind === 'abort') await chat.abort();
    else {
      const earlier = step.repeat === null || sent.length === 0 ? undefined : sent[step.repeat % sent.length];
      const id = earlier?.id ?? `m${index}`;
      const result = await chat.send({ id, text: `text of ${key}/${id}` }, { mode: step.mode });
      sent.push({ key, id, mode: step.mode, result });
    }
    await h.clock.advance(step.gap);
  }
  await h.clock.advance(60_000);
  for (const key of keys) expect(h.runtime.session(key).status()).toEqual({ state: 'idle', queued: 0 });
  const pending = await Promise.all(keys.map((key) => ledger.listMessages(key, ['pending'])));
  expect(pending.flat()).toEqual([]);
  return { h, keys, sent };
}

const isAccepted = (sent: Sent) => !['rejected', 'duplicate'].includes(sent.result.disposition);

/** Invariants (a) and (d): per session, runs open and close strictly one after another, and every run ends. */
function checkRunsSerialized(events: readonly RuntimeEvent[], keys: readonly string[]): void {
  for (const key of keys) {
    let open: string | undefined;
    for (const event of events) {
      if (event.sessionKey !== key) continue;
      if (event.type === 'run.started') {
        expect(open, `${key}: ${event.runId} started while ${open} was open`).toBeUndefined();
        open = event.runId;
      } else if (event.type === 'run.ended') {
        expect(event.runId).toBe(open);
        open = undefined;
      }
    }
    expect(open, `${key}: ${open} never ended`).toBeUndefined();
  }
}

/** Where each message was consumed: ran (run.started), was steered in (message.admitted) or dropped. */
function consumptions(events: readonly RuntimeEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  const count = (key: string, id: string) =>
    counts.set(`${key}/${id}`, (counts.get(`${key}/${id}`) ?? 0) + 1);
  for (const event of events) {
    if (event.type === 'run.started' || event.type === 'message.admitted')
      for (const id of event.messageIds) count(event.sessionKey, id);
    if (event.type === 'message.dropped') count(event.sessionKey, event.messageId);
  }
  return counts;
}

/** Per session, message ids in the order they first reached a run. */
function firstReach(events: readonly RuntimeEvent[], key: string): string[] {
  const order: string[] = [];
  for (const event of events) {
    if (event.sessionKey !== key || (event.type !== 'run.started' && event.type !== 'message.admitted'))
      continue;
    for (const id of event.messageIds) if (!order.includes(id)) order.push(id);
  }
  return order;
}

describe('createRuntime (properties over random interleavings)', () => {
  it('keeps runs serialized per session, ends every run, loses nothing and keeps queued messages in order when sends interleave in every mode', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 5 }),
        fc.array(action(allModes), { minLength: 1, maxLength: 25 }),
        plans,
        fc.integer({ min: 1, max: 8 }),
        async (sessions, actions, callPlans, cap) => {
          const { h, keys, sent } = await play(sessions, actions, callPlans, cap);
          checkRunsSerialized(h.events, keys);
          const accepted = new Map<string, Sent>();
          for (const message of sent) {
            const known = accepted.has(`${message.key}/${message.id}`);
            expect(message.result.disposition === 'duplicate').toBe(known);
            if (!known && isAccepted(message)) accepted.set(`${message.key}/${message.id}`, message);
          }
          const counts = consumptions(h.events);
          for (const [key, message] of accepted) {
            const times = counts.get(key) ?? 0;
            if (message.mode === 'steer-backlog') expect([1, 2], key).toContain(times);
            else expect(times, key).toBe(1);
          }
          expect([...counts.keys()].filter((key) => !accepted.has(key))).toEqual([]);
          // Steer and interrupt messages jump the queue by design; followup and collect messages must reach
          // the runs in the order they were sent, whatever else happens around them.
          for (const key of keys) {
            const queuedModes = new Set(['followup', 'collect']);
            const reached = new Set(firstReach(h.events, key));
            const inSendOrder = [...accepted.values()]
              .filter((message) => message.key === key && queuedModes.has(message.mode))
              .map((message) => message.id)
              .filter((id) => reached.has(id));
            const reachOrder = firstReach(h.events, key).filter((id) => inSendOrder.includes(id));
            expect(reachOrder).toEqual(inSendOrder);
          }
          await h.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('hands every followup and collect message to the model in arrival order per session', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 4 }),
        fc.array(action(['followup', 'collect']), { minLength: 1, maxLength: 25 }),
        plans,
        async (sessions, actions, callPlans) => {
          const { h, keys, sent } = await play(sessions, actions, callPlans, 100);
          const firstSeen: string[] = [];
          for (const request of h.model.requests) {
            const text = request.messages.map((message) => message.content).join('\n');
            for (const match of text.matchAll(/text of (chat:\d+\/m\d+)/g)) {
              if (!firstSeen.includes(match[1] as string)) firstSeen.push(match[1] as string);
            }
          }
          for (const key of keys) {
            const ids = sent
              .filter((message) => message.key === key && message.result.disposition !== 'duplicate')
              .map((message) => `${key}/${message.id}`);
            const aborted = new Set(
              h
                .of('run.ended')
                .filter((event) => event.sessionKey === key && event.status === 'aborted')
                .map((event) => event.runId),
            );
            const unseen = ids.filter((id) => !firstSeen.includes(id));
            const abortedIds = h
              .of('run.started')
              .filter((event) => aborted.has(event.runId))
              .flatMap((event) => event.messageIds.map((id) => `${key}/${id}`));
            expect(unseen.filter((id) => !abortedIds.includes(id))).toEqual([]);
            expect(firstSeen.filter((id) => ids.includes(id))).toEqual(
              ids.filter((id) => !unseen.includes(id)),
            );
          }
          await h.close();
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('createRuntime globalLane option', () => {
  it('runs at most concurrency runs at once across sessions and reports lane.waited for runs that waited past warnAfterMs', async () => {
    const h = createHarness(() => ({ text: 'slow steady answer', tokenDelayMs: 100 }), {
      globalLane: { concurrency: 2, warnAfterMs: 100 },
    });
    const keys = ['s:1', 's:2', 's:3', 's:4', 's:5'];
    for (const key of keys) await h.runtime.session(key).send({ id: key, text: 'go' });
    await h.clock.advance(1000);
    let running = 0;
    let peak = 0;
    for (const event of h.events) {
      if (event.type === 'run.started') peak = Math.max(peak, ++running);
      if (event.type === 'run.ended') running--;
    }
    expect(peak).toBe(2);
    expect(h.of('run.ended').map((event) => [event.sessionKey, event.status, event.at])).toEqual([
      ['s:1', 'completed', 200],
      ['s:2', 'completed', 200],
      ['s:3', 'completed', 400],
      ['s:4', 'completed', 400],
      ['s:5', 'completed', 600],
    ]);
    expect(
      h
        .of('lane.waited')
        .map(({ sessionKey, lane, waitedMs, position }) => ({ sessionKey, lane, waitedMs, position })),
    ).toEqual([
      { sessionKey: 's:3', lane: 'global', waitedMs: 200, position: 1 },
      { sessionKey: 's:4', lane: 'global', waitedMs: 200, position: 2 },
      { sessionKey: 's:5', lane: 'global', waitedMs: 400, position: 3 },
    ]);
    await h.close();
  });
});
