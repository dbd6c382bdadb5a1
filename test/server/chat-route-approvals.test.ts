import { afterEach, describe, expect, it } from 'vitest';
import { readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai';
import { defineTool } from 'agentlanes';
import { z } from 'zod';
import { startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const cancelOrder = defineTool({
  name: 'cancel',
  description: 'Cancel an order',
  input: z.object({ orderId: z.string() }),
  risk: 'high',
  execute: ({ orderId }) => Promise.resolve({ orderId, cancelled: true }),
});

const askCustomer = defineTool({
  name: 'ask',
  description: 'Ask the customer (answered by the page)',
  input: z.object({ question: z.string() }),
});

/** A user message as `useChat` holds it. */
function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** The chunks of a chat response, each checked against the AI SDK's own `uiMessageChunkSchema`. */
async function chunksOf(response: Response): Promise<UIMessageChunk[]> {
  expect(response.status).toBe(200);
  const frames = (await response.text()).split('\n\n').filter((frame) => frame.startsWith('data: '));
  expect(frames.at(-1)).toBe('data: [DONE]');
  const schema = uiMessageChunkSchema();
  return Promise.all(
    frames.slice(0, -1).map(async (frame) => {
      const checked = await schema.validate?.(JSON.parse(frame.slice(6)));
      if (checked?.success !== true) throw new Error(`not a UI message chunk: ${frame}`);
      return checked.value;
    }),
  );
}

/** The assistant message the chunks build, read by the `ai` package (continuing `message` when given). */
async function messageOf(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const errors: unknown[] = [];
  let last: UIMessage | undefined;
  for await (const built of readUIMessageStream<UIMessage>({
    stream,
    ...(message === undefined ? {} : { message }),
    onError: (error) => errors.push(error),
  })) {
    last = built;
  }
  expect(errors).toEqual([]);
  if (last === undefined) throw new Error('no message was built');
  return last;
}

/** The message's parts without step boundaries. */
function partsOf(message: UIMessage) {
  return message.parts.filter((part) => part.type !== 'step-start');
}

/** Post a chat body to session `key`. */
function postChat(key: string, messages: UIMessage[], token?: string) {
  return (harness as ServerHarness).request(`/v1/sessions/${key}/chat`, {
    method: 'POST',
    json: { id: 'chat-1', trigger: 'submit-message', messages },
    ...(token === undefined ? {} : { token }),
  });
}

/** Ask the page's question: the first turn, paused at a tool call. */
async function pausedTurn(key: string, user: UIMessage): Promise<UIMessage> {
  return messageOf(await chunksOf(await postChat(key, [user])));
}

/** The assistant message with the tool part of `toolCallId` changed as `useChat` changes it. */
function answered(message: UIMessage, toolCallId: string, change: Record<string, unknown>): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      'toolCallId' in part && part.toolCallId === toolCallId ? { ...part, ...change } : part,
    ),
  };
}

describe('createServer: tool approvals through useChat', () => {
  it('shows a call that waits as approval-requested and streams the approved continuation into the same message', async () => {
    harness = await startServer(
      [
        {
          text: 'Let me cancel it.',
          toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }],
        },
        { text: 'It is cancelled.' },
      ],
      { tools: [cancelOrder] },
    );
    const user = userMessage('u-1', 'cancel my order');
    const first = await pausedTurn('web:a', user);
    expect(first.id).toBe('u-1:reply');
    expect(partsOf(first)).toMatchObject([
      { type: 'text', text: 'Let me cancel it.' },
      { type: 'tool-cancel', toolCallId: 'call-1', state: 'approval-requested', approval: { id: 'call-1' } },
    ]);
    const reply = answered(first, 'call-1', {
      state: 'approval-responded',
      approval: { id: 'call-1', approved: true },
    });
    const continued = await chunksOf(await postChat('web:a', [user, reply]));
    expect(continued[0]).toEqual({ type: 'start', messageId: 'u-1:reply' });
    const final = await messageOf(continued, reply);
    expect(final.id).toBe('u-1:reply');
    expect(partsOf(final)).toMatchObject([
      { type: 'text', text: 'Let me cancel it.' },
      { type: 'tool-cancel', state: 'output-available', output: { orderId: 'o-1', cancelled: true } },
      { type: 'text', text: 'It is cancelled.', state: 'done' },
    ]);
    expect(await harness.runtime.session('web:a').runs()).toMatchObject([{ status: 'completed' }]);
  });

  it('streams tool-output-denied and the rest of the answer when the page rejects the call', async () => {
    harness = await startServer(
      [
        { text: 'Cancelling.', toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }] },
        { text: 'I left it as it is.' },
      ],
      { tools: [cancelOrder] },
    );
    const user = userMessage('u-1', 'cancel my order');
    const first = await pausedTurn('web:a', user);
    const reply = answered(first, 'call-1', {
      state: 'approval-responded',
      approval: { id: 'call-1', approved: false, reason: 'not this one' },
    });
    const final = await messageOf(await chunksOf(await postChat('web:a', [user, reply])), reply);
    expect(partsOf(final)).toMatchObject([
      { type: 'text', text: 'Cancelling.' },
      { type: 'tool-cancel', toolCallId: 'call-1', state: 'output-denied' },
      { type: 'text', text: 'I left it as it is.' },
    ]);
    const requests = harness.model.requests;
    expect(JSON.stringify(requests.at(-1)?.messages)).toContain('not this one');
  });

  it('hands a deferred call the output the page added with addToolOutput', async () => {
    harness = await startServer(
      [
        { toolCalls: [{ id: 'call-1', name: 'ask', args: { question: 'which order?' } }] },
        { text: 'Thanks, looking at o-7.' },
      ],
      { tools: [askCustomer] },
    );
    const user = userMessage('u-1', 'cancel an order');
    const first = await pausedTurn('web:d', user);
    expect(partsOf(first)).toMatchObject([
      { type: 'tool-ask', toolCallId: 'call-1', state: 'input-available' },
    ]);
    const reply = answered(first, 'call-1', { state: 'output-available', output: { orderId: 'o-7' } });
    const final = await messageOf(await chunksOf(await postChat('web:d', [user, reply])), reply);
    expect(partsOf(final)).toMatchObject([
      { type: 'tool-ask', state: 'output-available', output: { orderId: 'o-7' } },
      { type: 'text', text: 'Thanks, looking at o-7.' },
    ]);
    expect(JSON.stringify(harness.model.requests.at(-1)?.messages)).toContain('o-7');
  });

  it('refuses an approval id the session does not wait for (made up, or another session’s) and changes nothing', async () => {
    harness = await startServer(
      [
        { toolCalls: [{ id: 'call-a', name: 'cancel', args: { orderId: 'o-1' } }] },
        { toolCalls: [{ id: 'call-b', name: 'cancel', args: { orderId: 'o-2' } }] },
      ],
      { tools: [cancelOrder] },
    );
    const userA = userMessage('u-a', 'cancel o-1');
    const first = await pausedTurn('web:a', userA);
    await pausedTurn('web:b', userMessage('u-b', 'cancel o-2'));
    const madeUp = answered(first, 'call-a', {
      toolCallId: 'call-x',
      state: 'approval-responded',
      approval: { id: 'call-x', approved: true },
    });
    const refused = await postChat('web:a', [userA, madeUp]);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ error: { code: 'not_found' } });
    const otherSession = answered(first, 'call-a', {
      toolCallId: 'call-b',
      state: 'approval-responded',
      approval: { id: 'call-b', approved: true },
    });
    const crossed = await postChat('web:a', [userA, otherSession]);
    expect(crossed.status).toBe(404);
    const mismatched = answered(first, 'call-a', {
      state: 'approval-responded',
      approval: { id: 'call-b', approved: true },
    });
    expect((await postChat('web:a', [userA, mismatched])).status).toBe(404);
    const unanswered = await postChat('web:a', [userA, first]);
    expect(unanswered.status).toBe(400);
    expect(await unanswered.json()).toMatchObject({ error: { code: 'invalid_input' } });
    const waiting = await harness.runtime.pendingCalls();
    expect(waiting.map((call) => [call.sessionKey, call.toolCallId]).sort()).toEqual([
      ['web:a', 'call-a'],
      ['web:b', 'call-b'],
    ]);
  });

  it('refuses an approval with 403 when the token lacks the approve capability, and the call still waits', async () => {
    harness = await startServer(
      [{ toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }] }],
      {
        tools: [cancelOrder],
      },
    );
    const user = userMessage('u-1', 'cancel my order');
    const first = messageOfResponse(await postChat('web:a', [user], webToken));
    const reply = answered(await first, 'call-1', {
      state: 'approval-responded',
      approval: { id: 'call-1', approved: true },
    });
    const refused = await postChat('web:a', [user, reply], webToken);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'forbidden', capability: 'approve' } });
    expect(await harness.runtime.pendingCalls()).toMatchObject([{ toolCallId: 'call-1', kind: 'approval' }]);
  });
});

/** The message a response builds. */
async function messageOfResponse(response: Response): Promise<UIMessage> {
  return messageOf(await chunksOf(response));
}

describe('createServer: GET /v1/sessions/:key/chat/:chatId/stream', () => {
  it('answers 204 when no run is active', async () => {
    harness = await startServer([{ text: 'Hi.' }]);
    const response = await harness.request('/v1/sessions/web:r/chat/chat-1/stream');
    expect(response.status).toBe(204);
  });

  it('replays the active run from its start, then live, every character once', async () => {
    const text = 'one two three four five six';
    harness = await startServer([{ text, tokenDelayMs: 100 }]);
    const posted = await postChat('web:r', [userMessage('u-1', 'count')]);
    const reader = posted.body?.getReader();
    await reader?.read();
    await harness.clock.advance(250);
    await reader?.cancel();
    const resumed = await harness.request('/v1/sessions/web:r/chat/chat-1/stream');
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const body = resumed.text();
    await harness.clock.runAll();
    const chunks = await chunksOf(new Response(await body, { status: 200 }));
    expect(chunks[0]).toEqual({ type: 'start', messageId: 'u-1:reply' });
    const message = await messageOf(chunks);
    expect(partsOf(message)).toMatchObject([{ type: 'text', text, state: 'done' }]);
  });

  it('replays a pause the run got past as a step boundary, and the whole message through to its end', async () => {
    const text = 'It is cancelled now.';
    harness = await startServer(
      [
        { text: 'Cancelling.', toolCalls: [{ id: 'call-1', name: 'cancel', args: { orderId: 'o-1' } }] },
        { text, tokenDelayMs: 100 },
      ],
      { tools: [cancelOrder] },
    );
    await pausedTurn('web:p', userMessage('u-1', 'cancel o-1'));
    const paused = await harness.request('/v1/sessions/web:p/chat/chat-1/stream');
    expect(paused.status).toBe(204);
    const approved = await harness.request('/v1/sessions/web:p/approvals/call-1', {
      method: 'POST',
      json: { decision: 'approve' },
    });
    expect(approved.status).toBe(204);
    await harness.clock.advance(150);
    const resumed = await harness.request('/v1/sessions/web:p/chat/chat-1/stream');
    const body = resumed.text();
    await harness.clock.runAll();
    const chunks = await chunksOf(new Response(await body, { status: 200 }));
    expect(chunks.filter((chunk) => chunk.type === 'finish')).toEqual([
      { type: 'finish', finishReason: 'stop' },
    ]);
    const message = await messageOf(chunks);
    expect(message.id).toBe('u-1:reply');
    expect(partsOf(message)).toMatchObject([
      { type: 'text', text: 'Cancelling.' },
      { type: 'tool-cancel', state: 'output-available', output: { orderId: 'o-1', cancelled: true } },
      { type: 'text', text, state: 'done' },
    ]);
  });

  it('applies the token’s scope to the session the URL names', async () => {
    harness = await startServer([]);
    const response = await harness.request('/v1/sessions/other:r/chat/chat-1/stream', { token: webToken });
    expect(response.status).toBe(403);
  });
});

describe('createServer: regenerate-message on the chat route', () => {
  it('sends the user’s text again as a new message and streams the new answer', async () => {
    harness = await startServer([
      { text: 'First answer.' },
      { text: 'Second answer.' },
      { text: 'Third answer.' },
    ]);
    const user = userMessage('u-1', 'tell me');
    await chunksOf(await postChat('web:g', [user]));
    const regenerate = harness.request('/v1/sessions/web:g/chat', {
      method: 'POST',
      json: { id: 'chat-1', trigger: 'regenerate-message', messages: [user] },
    });
    const second = await messageOf(await chunksOf(await regenerate));
    expect(second.id).toBe('u-1:regenerate-1:reply');
    expect(partsOf(second)).toMatchObject([{ type: 'text', text: 'Second answer.' }]);
    const third = await messageOfResponse(
      await harness.request('/v1/sessions/web:g/chat', {
        method: 'POST',
        json: { id: 'chat-1', trigger: 'regenerate-message', messages: [user] },
      }),
    );
    expect(partsOf(third)).toMatchObject([{ type: 'text', text: 'Third answer.' }]);
    const runs = await harness.runtime.session('web:g').runs();
    expect(runs.map((run) => run.messageIds)).toEqual([['u-1'], ['u-1:regenerate-1'], ['u-1:regenerate-2']]);
  });
});
