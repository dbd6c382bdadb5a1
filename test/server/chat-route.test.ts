import { afterEach, describe, expect, it } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { defineTool } from 'agentlanes';
import { z } from 'zod';
import { adminToken, startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Look an order up',
  input: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => Promise.resolve({ orderId, status: 'shipped' }),
});

/** A user message as `useChat` holds it. */
function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

describe('createServer: POST /v1/sessions/:key/chat', () => {
  it('answers useChat in the AI SDK UI message stream protocol, read by the ai package itself', async () => {
    harness = await startServer(
      [
        { text: 'Let me check.', toolCalls: [{ id: 'call-1', name: 'lookup', args: { orderId: 'o-1' } }] },
        { text: 'Your order has shipped.' },
      ],
      { tools: [lookup] },
    );
    const transport = new DefaultChatTransport<UIMessage>({
      api: `${harness.server.url}/v1/sessions/web:chat/chat`,
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [userMessage('u-1', 'where is my order?')],
      abortSignal: undefined,
    });
    const errors: unknown[] = [];
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream<UIMessage>({ stream, onError: (e) => errors.push(e) })) {
      last = message;
    }
    expect(errors).toEqual([]);
    expect(last?.role).toBe('assistant');
    const parts = (last?.parts ?? []).filter((part) => part.type !== 'step-start');
    expect(parts).toMatchObject([
      { type: 'text', text: 'Let me check.', state: 'done' },
      {
        type: 'tool-lookup',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { orderId: 'o-1' },
        output: { orderId: 'o-1', status: 'shipped' },
      },
      { type: 'text', text: 'Your order has shipped.', state: 'done' },
    ]);
    const runs = await harness.runtime.session('web:chat').runs();
    expect(runs).toMatchObject([{ status: 'completed', messageIds: ['u-1'] }]);
  });

  it('sends the protocol header and ends with [DONE]; a rejected message answers 409 and stores nothing', async () => {
    harness = await startServer([{ text: 'Hi!' }, { hang: true }]);
    const post = (id: string, text: string) =>
      harness?.request('/v1/sessions/web:c/chat', {
        method: 'POST',
        json: { id: 'chat-1', trigger: 'submit-message', messages: [userMessage(id, text)] },
      }) as Promise<Response>;
    const response = await post('u-1', 'hello');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const text = await response.text();
    const frames = text.split('\n\n').filter((frame) => frame.startsWith('data: '));
    expect(frames.at(-1)).toBe('data: [DONE]');
    expect(frames.slice(0, 2).map((frame) => JSON.parse(frame.slice(6)) as unknown)).toEqual([
      { type: 'start', messageId: 'u-1:reply' },
      { type: 'start-step' },
    ]);

    await harness.request('/v1/sessions/web:c/settings', { method: 'PUT', json: { mode: 'reject' } });
    const busy = harness.request('/v1/sessions/web:c/chat', {
      method: 'POST',
      json: { messages: [userMessage('u-2', 'this one hangs')] },
    });
    const hanging = await busy;
    const reader = hanging.body?.getReader();
    await reader?.read();
    const refused = await post('u-3', 'refused');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ disposition: 'rejected', error: { code: 'rejected_busy' } });
    const received = (await harness.runtime.session('web:c').transcript()).filter(
      (turn) => turn.role === 'user',
    );
    expect(received).toHaveLength(2);
    await reader?.cancel();
    await harness.request('/v1/sessions/web:c/abort', { method: 'POST' });
  });

  it('answers a message queued behind a busy run with the stream of the run it becomes, once that run starts', async () => {
    harness = await startServer([{ text: 'first answer', tokenDelayMs: 1000 }, { text: 'queued answer' }]);
    const first = await harness.request('/v1/sessions/web:q/messages', {
      method: 'POST',
      json: { id: 'm-1', text: 'first' },
    });
    expect(await first.json()).toMatchObject({ disposition: 'started' });
    const queued = await harness.request('/v1/sessions/web:q/chat', {
      method: 'POST',
      json: { id: 'chat-1', trigger: 'submit-message', messages: [userMessage('u-2', 'second')] },
    });
    expect(queued.status).toBe(200);
    expect(queued.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    // Queued, not started: the session still runs the first message.
    expect(await (await harness.request('/v1/sessions/web:q/queue')).json()).toMatchObject({
      queue: [{ messageId: 'u-2', text: 'second' }],
    });
    // The first run streams on the clock, then the queue drains after its debounce: the body ends with that run.
    const body = queued.text();
    await harness.clock.runAll();
    const frames = (await body).split('\n\n').filter((frame) => frame.startsWith('data: '));
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)) as { type: string });
    expect(chunks.slice(0, 2)).toEqual([{ type: 'start', messageId: 'u-2:reply' }, { type: 'start-step' }]);
    expect(chunks.slice(-2)).toEqual([{ type: 'finish-step' }, { type: 'finish', finishReason: 'stop' }]);
    // Only the queued message's run is in it: none of the first run's text.
    const text = chunks
      .filter((chunk): chunk is { type: 'text-delta'; delta: string } => chunk.type === 'text-delta')
      .map((chunk) => chunk.delta)
      .join('');
    expect(text).toBe('queued answer');
    const runs = await harness.runtime.session('web:q').runs();
    expect(runs).toMatchObject([
      { status: 'completed', messageIds: ['m-1'], text: 'first answer' },
      { status: 'completed', messageIds: ['u-2'], text: 'queued answer' },
    ]);
  });

  it('refuses a body whose last message is not the user’s with 400', async () => {
    harness = await startServer([]);
    const response = await harness.request('/v1/sessions/web:c/chat', {
      method: 'POST',
      json: { messages: [{ id: 'a-1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_input' } });
  });

  it('keeps the run going when the client disconnects mid-run', async () => {
    harness = await startServer([{ text: 'one two three four five six', tokenDelayMs: 100 }]);
    const controller = new AbortController();
    const response = await harness.request('/v1/sessions/web:d/chat', {
      method: 'POST',
      json: { messages: [userMessage('u-1', 'count')] },
      signal: controller.signal,
    });
    const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    await harness.clock.advance(100);
    let received = '';
    while (!received.includes('text-delta')) {
      const chunk = await reader.read();
      received += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    const waiting = harness.runtime.session('web:d').waitForEnd({ timeoutMs: 60_000 });
    await harness.clock.runAll();
    expect(await waiting).toMatchObject({
      status: 'ended',
      run: { status: 'completed' },
    });
    const runs = await harness.runtime.session('web:d').runs();
    expect(runs[0]?.text).toBe('one two three four five six');
  });
});
