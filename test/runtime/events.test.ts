import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeEvent } from 'agentlanes';
import { runtimeEventSchema } from 'agentlanes/events';
import { type ModelRequest } from 'agentlanes/providers';
import { createHarness } from '../support/runtime-harness.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Look something up',
  input: z.object({ q: z.string() }),
  execute: ({ q }) => ({ found: q }),
});

/** Asks for `lookup` once when the user says "lookup"; otherwise answers three words 10 ms apart. */
function script(request: ModelRequest) {
  const last = request.messages.at(-1);
  if (last?.role === 'user' && last.content.includes('lookup')) {
    return {
      text: 'checking',
      toolCalls: [{ id: 'call-1', name: 'lookup', args: { q: 'x' } }],
      tokenDelayMs: 10,
    };
  }
  return { text: 'all done here', tokenDelayMs: 10 };
}

async function collect(
  events: AsyncIterable<RuntimeEvent>,
  until: (event: RuntimeEvent) => boolean = () => false,
): Promise<RuntimeEvent[]> {
  const seen: RuntimeEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (until(event)) break;
  }
  return seen;
}

/** Two sessions, one with a tool call and a steer, one with a queued follow-up: most event types. */
async function busyDay() {
  const h = createHarness(script, { tools: [lookup] });
  const a = h.runtime.session('telegram:a');
  const b = h.runtime.session('discord:b');
  await a.send({ id: 'a1', text: 'lookup please' });
  await b.send({ id: 'b1', text: 'hello' });
  await b.send({ id: 'b2', text: 'and more' }, { mode: 'followup', debounceMs: 0 });
  await h.clock.advance(15);
  await a.steer({ id: 'a2', text: 'more detail' });
  await h.clock.advance(200);
  return { h, a, b };
}

describe('RuntimeEvent', () => {
  it('carries type, sessionKey, seq, cursor and at and parses with runtimeEventSchema for every event', async () => {
    const { h } = await busyDay();
    expect(h.events.length).toBeGreaterThan(20);
    for (const event of h.events) {
      expect(runtimeEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(true);
      expect(event).toEqual(
        expect.objectContaining({
          type: expect.any(String) as string,
          sessionKey: expect.any(String) as string,
          seq: expect.any(Number) as number,
          cursor: expect.any(Number) as number,
          at: expect.any(Number) as number,
        }),
      );
    }
    expect(new Set(h.events.map((event) => event.type))).toEqual(
      new Set([
        'message.received',
        'message.queued',
        'message.steered',
        'message.admitted',
        'run.started',
        'assistant.delta',
        'assistant.block',
        'assistant.final',
        'tool.called',
        'tool.succeeded',
        'cost.updated',
        'run.ended',
      ]),
    );
    await h.close();
  });

  it('numbers seq 1, 2, 3… per session and cursors strictly increasing across sessions', async () => {
    const { h } = await busyDay();
    for (const key of ['telegram:a', 'discord:b']) {
      const seqs = h.events.filter((event) => event.sessionKey === key).map((event) => event.seq);
      expect(seqs.length).toBeGreaterThan(5);
      expect(seqs).toEqual(seqs.map((_, index) => index + 1));
    }
    const cursors = h.events.map((event) => event.cursor);
    expect(cursors.every((cursor, index) => index === 0 || cursor > (cursors[index - 1] as number))).toBe(
      true,
    );
    const keys = h.events.map((event) => event.sessionKey);
    expect(keys.indexOf('discord:b')).toBeLessThan(keys.lastIndexOf('telegram:a'));
    await h.close();
  });
});

describe('Session.events', () => {
  it('replays recorded events after the cursor and then follows live ones without gap or repeat when started mid-run', async () => {
    const h = createHarness(script, { tools: [lookup] });
    const a = h.runtime.session('telegram:a');
    const b = h.runtime.session('discord:b');
    await a.send({ id: 'a1', text: 'lookup please' });
    await b.send({ id: 'b1', text: 'hello' });
    await h.clock.advance(15);
    const after = h.events.find((event) => event.type === 'run.started')?.cursor ?? -1;
    const steering = a.steer({ id: 'a2', text: 'more detail' }); // its events are not in the ledger yet
    const following = collect(a.events({ after }), (event) => event.type === 'run.ended');
    await steering;
    await h.clock.advance(200);
    const seen = await following;
    const expected = h.events.filter((event) => event.sessionKey === 'telegram:a' && event.cursor > after);
    expect(seen.map((event) => event.cursor)).toEqual(expected.map((event) => event.cursor));
    expect(seen).toEqual(expected);
    expect(seen.at(-1)).toMatchObject({ type: 'run.ended', status: 'completed' });
    await h.close();
  });

  it('ends the iteration when its signal aborts, while the runtime stays open', async () => {
    const h = createHarness(script);
    const chat = h.runtime.session('telegram:a');
    await chat.send({ id: 'a1', text: 'hello' });
    await h.clock.advance(30);
    const controller = new AbortController();
    const following = collect(chat.events({ signal: controller.signal }));
    await h.clock.advance(0);
    controller.abort();
    const seen = await following;
    expect(seen.map((event) => event.seq)).toEqual(seen.map((_, index) => index + 1));
    expect(seen.at(-1)?.type).toBe('run.ended');
    expect(await chat.send({ id: 'a2', text: 'again' })).toMatchObject({ disposition: 'started' });
    await h.clock.advance(30);
    expect(seen.some((event) => 'messageId' in event && event.messageId === 'a2')).toBe(false);
    await h.close();
  });

  it('ends every iteration, per session and runtime-wide, when the runtime closes', async () => {
    const h = createHarness(script);
    const chat = h.runtime.session('telegram:a');
    await chat.send({ id: 'a1', text: 'hello' });
    const perSession = collect(chat.events());
    const everywhere = collect(h.runtime.events({ after: 0 }));
    await h.close();
    const [sessionEvents, allEvents] = await Promise.all([perSession, everywhere]);
    expect(sessionEvents.at(-1)).toMatchObject({ type: 'run.ended', status: 'completed' });
    expect(allEvents.map((event) => event.cursor)).toEqual(h.events.map((event) => event.cursor));
  });
});

describe('Runtime.events', () => {
  it('sees the events of every session, including sessions created after it started', async () => {
    const h = createHarness(script);
    const controller = new AbortController();
    const following = collect(h.runtime.events({ signal: controller.signal }));
    await h.runtime.session('telegram:a').send('hello');
    await h.runtime.session('slack:c').send('hi there');
    await h.clock.advance(30);
    controller.abort();
    const seen = await following;
    expect(new Set(seen.map((event) => event.sessionKey))).toEqual(new Set(['telegram:a', 'slack:c']));
    expect(seen.filter((event) => event.type === 'run.ended')).toHaveLength(2);
    await h.close();
  });
});

describe('Session.transcript', () => {
  it('returns user, assistant and tool turns in order, with messageIds on user turns, after a tool call and a steer', async () => {
    const { h, a } = await busyDay();
    const turns = await a.transcript();
    expect(
      turns.map((turn) => ({
        role: turn.role,
        content: turn.content,
        messageIds: turn.messageIds,
        runId: turn.runId,
      })),
    ).toEqual([
      { role: 'user', content: 'lookup please', messageIds: ['a1'], runId: 'run_1' },
      { role: 'assistant', content: 'checking', messageIds: undefined, runId: 'run_1' },
      { role: 'tool', content: '{"found":"x"}', messageIds: undefined, runId: 'run_1' },
      { role: 'assistant', content: 'all done here', messageIds: undefined, runId: 'run_1' },
      { role: 'user', content: 'more detail', messageIds: ['a2'], runId: 'run_1' },
      { role: 'assistant', content: 'all done here', messageIds: undefined, runId: 'run_1' },
    ]);
    expect(turns[1]?.toolCalls).toEqual([{ id: 'call-1', name: 'lookup', args: { q: 'x' } }]);
    expect(turns[2]).toMatchObject({ toolCallId: 'call-1', tool: 'lookup' });
    expect(turns.map((turn) => turn.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await h.runtime.session('discord:b').transcript()).map((turn) => turn.messageIds)).toEqual([
      ['b1'],
      undefined,
      ['b2'],
      undefined,
    ]);
    await h.close();
  });
});
