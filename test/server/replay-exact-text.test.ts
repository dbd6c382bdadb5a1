import { afterEach, describe, expect, it } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import type { RuntimeEvent } from 'agentlanes';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { adminToken, sseMessages, startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * An answer of exactly `length` characters in short words (the scripted model streams a word a token): thousands
 * of tokens, so a live stream falls behind its buffer and reads rows back from the ledger.
 */
function answerOf(length: number): string {
  let text = '';
  for (let index = 0; text.length < length; index++)
    text += `${String.fromCharCode(97 + (index % 26))}${index % 7} `;
  return text.slice(0, length);
}

/** The next event frame of an SSE stream. */
async function nextEvent(
  messages: ReturnType<typeof sseMessages>,
): Promise<{ event: RuntimeEvent; id: string }> {
  for (;;) {
    const next = await messages.next();
    if (next.done === true) throw new Error('the stream ended before an event');
    if (next.value.event !== undefined) continue;
    return { event: JSON.parse(next.value.data) as RuntimeEvent, id: next.value.id ?? '' };
  }
}

/** Open the session's event stream after `lastId` (none: from the start), read ONE event, and cut it. */
async function oneFrame(
  current: ServerHarness,
  sessionKey: string,
  lastId: string | undefined,
): Promise<{ event: RuntimeEvent; id: string }> {
  const controller = new AbortController();
  const response = await current.request(`/v1/sessions/${sessionKey}/events`, {
    signal: controller.signal,
    headers: lastId === undefined ? {} : { 'Last-Event-ID': lastId },
  });
  expect(response.status).toBe(200);
  const messages = sseMessages(response);
  try {
    return await nextEvent(messages);
  } finally {
    controller.abort();
    await messages.return?.().catch(() => undefined);
  }
}

describe('event replay of streamed assistant text', () => {
  it('yields every character exactly once when the client is cut after any frame and reconnects', async () => {
    // Long enough for rows of coalesced tokens and a live stream that falls behind; every frame is a reconnect.
    const answer = answerOf(2_000);
    harness = await startServer([{ text: answer, tokenDelayMs: 0 }], {
      ledger: { path: tempLedgerPath('replay-exact') },
    });
    const current = harness;
    const sessionKey = 'web:cut';
    // A live client records every frame: where a client cut after it stood, and the text it had by then.
    const live = await current.request(`/v1/sessions/${sessionKey}/events`);
    const messages = sseMessages(live);
    await current.runtime.session(sessionKey).send({ id: 'm1', text: 'tell me a lot' });
    const stops: { id: string; text: string }[] = [];
    let text = '';
    for (;;) {
      const frame = await nextEvent(messages);
      if (frame.event.type === 'assistant.delta') text += frame.event.delta;
      stops.push({ id: frame.id, text });
      if (frame.event.type === 'run.ended') break;
    }
    await messages.return?.();
    expect(text).toBe(answer);
    // A client cut after a frame (every third one: each costs a request) reconnects with its id and reads on.
    for (const stop of stops.filter((_, index) => index % 3 === 0).slice(0, -1)) {
      const rest = await current.request(`/v1/sessions/${sessionKey}/events`, {
        headers: { 'Last-Event-ID': stop.id },
      });
      const resumed = sseMessages(rest);
      let had = stop.text;
      for (;;) {
        const frame = await nextEvent(resumed);
        if (frame.event.type === 'assistant.delta') had += frame.event.delta;
        if (frame.event.type === 'run.ended') break;
      }
      await resumed.return?.();
      if (had !== answer) expect.fail(`cut after frame ${stop.id}: ${had.length} characters, not the answer`);
    }
    // And a client cut after every frame, each time it reconnects, from the middle of a coalesced row.
    const middle = stops[Math.floor(stops.length / 2)] as { id: string; text: string };
    let after = middle.id;
    let had = middle.text;
    for (;;) {
      const frame = await oneFrame(current, sessionKey, after);
      if (frame.event.type === 'assistant.delta') had += frame.event.delta;
      if (frame.event.type === 'run.ended') break;
      after = frame.id;
    }
    expect(had).toBe(answer);
    expect(stops.length).toBeGreaterThan(500);
  });

  it('yields every character exactly once to a live client when the model streams at 0 ms per token', async () => {
    const answer = answerOf(20_000);
    harness = await startServer([{ text: answer, tokenDelayMs: 0 }], {
      ledger: { path: tempLedgerPath('replay-live') },
    });
    const sessionKey = 'web:live';
    const response = await harness.request(`/v1/sessions/${sessionKey}/events`);
    const messages = sseMessages(response);
    await harness.runtime.session(sessionKey).send({ id: 'm1', text: 'tell me a lot' });
    let text = '';
    for (;;) {
      const next = await messages.next();
      if (next.done === true) throw new Error('the stream ended before the run did');
      if (next.value.event !== undefined) continue;
      const event = JSON.parse(next.value.data) as RuntimeEvent;
      if (event.type === 'assistant.delta') text += event.delta;
      if (event.type === 'run.ended') break;
    }
    await messages.return?.();
    expect(text).toBe(answer);
  });

  it('gives useChat exactly the answer over the chat route when the model streams at 0 ms per token', async () => {
    const answer = answerOf(20_000);
    harness = await startServer([{ text: answer, tokenDelayMs: 0 }], {
      ledger: { path: tempLedgerPath('replay-chat') },
    });
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${harness.server.url}/v1/sessions/web:chat/chat`,
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'tell me a lot' }] }],
      abortSignal: undefined,
    });
    const errors: unknown[] = [];
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (e) => errors.push(e) })) {
      last = message;
    }
    expect(errors).toEqual([]);
    const text = (last?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
    expect(text.length).toBe(answer.length);
    expect(text).toBe(answer);
  });
});
