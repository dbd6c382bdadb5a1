import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeOptions } from 'agentlanes';
import { aiSdkProvider } from 'agentlanes/ai-sdk';
import { createHarness, type Harness } from '../support/runtime-harness.js';
import { startSseServer, type SseServer } from '../support/sse-server.js';
import {
  anthropicText,
  chunk,
  openaiError,
  openaiText,
  openaiToolCall,
  startHangingServer,
} from './ai-sdk-wire.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function server(): Promise<SseServer> {
  const started = await startSseServer();
  closers.push(() => started.close());
  return started;
}

/** An OpenAI-compatible AI SDK provider whose models talk to `url`. */
function openaiAt(url: string) {
  return aiSdkProvider({
    model: (apiKey, modelId) => createOpenAI({ apiKey, baseURL: `${url}/v1` }).chat(modelId),
  });
}

function harness(options: Partial<RuntimeOptions>): Harness {
  const h = createHarness([], options);
  closers.push(() => h.close());
  return h;
}

async function runOnce(h: Harness, text: string) {
  const chat = h.runtime.session('telegram:1');
  await chat.send({ text });
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  return ended;
}

const twoKeys: RuntimeOptions['authProfiles'] = [
  { id: 'key-a', provider: 'openai', type: 'api_key', secret: 'sk-key-a-000000' },
  { id: 'key-b', provider: 'openai', type: 'api_key', secret: 'sk-key-b-000000' },
];

describe('aiSdkProvider in a runtime', () => {
  it('streams the answer of a run and records its usage', async () => {
    const openai = await server();
    openai.enqueue(openaiText('Hello from the AI SDK'));
    const h = harness({
      providers: { openai: openaiAt(openai.url) },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: [twoKeys[0]!],
    });
    expect(await runOnce(h, 'hi')).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'Hello from the AI SDK' },
    });
    await h.settled();
    expect(h.of('assistant.delta').map((event) => event.delta)).toEqual(['Hello from the AI SDK']);
    expect(h.of('run.ended')).toMatchObject([{ usage: { inputTokens: 10, outputTokens: 2 } }]);
    expect(openai.requests[0]?.body).toMatchObject({ model: 'gpt-4o-mini' });
  });

  it('runs a tool the model calls and sends its result back in the next call', async () => {
    const openai = await server();
    openai.enqueue(openaiToolCall('call_1', 'order_status', { order: 'A7' }), openaiText('A7 has shipped.'));
    const orderStatus = defineTool({
      name: 'order_status',
      description: 'The status of an order',
      input: z.object({ order: z.string() }),
      execute: ({ order }) => ({ order, status: 'shipped' }),
    });
    const h = harness({
      providers: { openai: openaiAt(openai.url) },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: [twoKeys[0]!],
      tools: [orderStatus],
    });
    expect(await runOnce(h, 'where is A7?')).toMatchObject({
      run: { status: 'completed', text: 'A7 has shipped.' },
    });
    const first = openai.requests[0]?.body as { tools: { function: { name: string } }[] };
    expect(first.tools.map((tool) => tool.function.name)).toContain('order_status');
    const second = openai.requests[1]?.body as { messages: Record<string, unknown>[] };
    expect(second.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: JSON.stringify({ order: 'A7', status: 'shipped' }),
    });
  });

  it('rotates from key A to key B on a 429 and cools key A for its Retry-After', async () => {
    const openai = await server();
    openai.enqueue(
      openaiError(429, 'Rate limit reached for requests', { 'retry-after': '7' }),
      openaiText('ok'),
    );
    const h = harness({
      providers: { openai: openaiAt(openai.url) },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: twoKeys,
    });
    expect(await runOnce(h, 'hi')).toMatchObject({ run: { status: 'completed', text: 'ok' } });
    expect(openai.requests.map((request) => request.headers.authorization)).toEqual([
      'Bearer sk-key-a-000000',
      'Bearer sk-key-b-000000',
    ]);
    await h.settled();
    expect(h.of('failover.rotated')).toMatchObject([
      { fromProfile: 'key-a', toProfile: 'key-b', reason: 'rate_limit' },
    ]);
    expect(h.of('profile.cooldown')).toMatchObject([
      { profileId: 'key-a', reason: 'rate_limit', until: 7000 },
    ]);
  });

  it('falls back to an Anthropic model when the OpenAI one is overloaded', async () => {
    const openai = await server();
    const anthropic = await server();
    openai.enqueue(openaiError(503, 'The server is overloaded'));
    anthropic.enqueue(anthropicText('from Claude'));
    const h = harness({
      providers: {
        openai: openaiAt(openai.url),
        anthropic: aiSdkProvider({
          model: (apiKey, modelId) => createAnthropic({ apiKey, baseURL: `${anthropic.url}/v1` })(modelId),
        }),
      },
      model: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        fallbacks: [{ provider: 'anthropic', model: 'claude-haiku-4-5' }],
      },
      authProfiles: [
        twoKeys[0]!,
        { id: 'an-1', provider: 'anthropic', type: 'api_key', secret: 'sk-ant-000000' },
      ],
    });
    expect(await runOnce(h, 'hi')).toMatchObject({ run: { status: 'completed', text: 'from Claude' } });
    expect(anthropic.requests[0]?.headers['x-api-key']).toBe('sk-ant-000000');
    expect(anthropic.requests[0]?.body).toMatchObject({ model: 'claude-haiku-4-5' });
    await h.settled();
    expect(h.of('failover.fallback')).toMatchObject([
      { fromModel: 'gpt-4o-mini', toProvider: 'anthropic', toModel: 'claude-haiku-4-5' },
    ]);
  });

  it('closes the request on the server when the run is aborted mid-answer', async () => {
    const hanging = await startHangingServer([{ data: chunk({ role: 'assistant', content: 'Thinking' }) }]);
    closers.push(() => hanging.close());
    const h = harness({
      providers: { openai: openaiAt(hanging.url) },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: [twoKeys[0]!],
    });
    const chat = h.runtime.session('telegram:1');
    await chat.send({ text: 'hi' });
    const ended = chat.waitForEnd({ timeoutMs: 600_000 });
    await h.clock.advance(0);
    await hanging.received;
    expect(await chat.abort({ reason: 'user stop' })).toBe(true);
    await hanging.closed;
    expect(await ended).toMatchObject({ run: { status: 'aborted' } });
    await h.settled();
    expect(h.of('profile.cooldown')).toEqual([]);
  });
});
