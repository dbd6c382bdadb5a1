import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aiSdkProvider, type AiSdkModelFactory } from 'agentlanes/ai-sdk';
import { fakeClock } from 'agentlanes/testing';
import { isRuntimeError } from '../../src/core/errors.js';
import {
  ProviderError,
  type ModelPart,
  type ModelProvider,
  type ModelRequest,
} from '../../src/providers/model-provider.js';
import { startSseServer, type SseServer } from '../support/sse-server.js';
import {
  anthropicText,
  block,
  chunk,
  completion,
  frame,
  messageEnd,
  messageStart,
  openaiError,
  openaiText,
  openaiToolCall,
  startHangingServer,
  usageChunk,
} from './ai-sdk-wire.js';

const secret = 'sk-test-0123456789abcdef';
const request: ModelRequest = {
  model: 'gpt-test',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
};

async function collect(stream: AsyncIterable<ModelPart>): Promise<{ parts: ModelPart[]; error?: unknown }> {
  const parts: ModelPart[] = [];
  try {
    for await (const part of stream) parts.push(part);
    return { parts };
  } catch (error) {
    return { parts, error };
  }
}

function providerError(error: unknown): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('aiSdkProvider with @ai-sdk/openai', () => {
  let server: SseServer;
  const openai = (options: { clock?: { now(): number } } = {}): ModelProvider =>
    aiSdkProvider({
      model: (apiKey, modelId) => createOpenAI({ apiKey, baseURL: `${server.url}/v1` }).chat(modelId),
      ...options,
    });
  const call = (
    provider: ModelProvider,
    body: ModelRequest = request,
    signal = new AbortController().signal,
  ) => collect(provider.stream(body, { signal, credential: { profileId: 'oa-1', secret } }));
  const lastBody = () => server.requests.at(-1)?.body as Record<string, unknown>;

  beforeEach(async () => {
    server = await startSseServer();
  });
  afterEach(() => server.close());

  it('yields text deltas, then usage and finish, with the key and the run model on the request', async () => {
    server.enqueue(
      completion(
        chunk({ role: 'assistant', content: 'Hel' }),
        chunk({ content: 'lo' }),
        chunk({}, 'stop'),
        usageChunk(12, 3),
      ),
    );
    const { parts, error } = await call(openai());
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${secret}`);
    expect(lastBody()).toMatchObject({
      model: 'gpt-test',
      stream: true,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('yields a tool call with parsed arguments and sends tools, calls and results in the vendor format', async () => {
    server.enqueue(openaiToolCall('call_1', 'lookup', { order: 'A7' }));
    const body: ModelRequest = {
      ...request,
      tools: [
        {
          name: 'lookup',
          description: 'Find an order',
          inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
        },
      ],
      messages: [
        { role: 'user', content: 'where is A6?' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [{ id: 'call_0', name: 'lookup', args: { order: 'A6' } }],
        },
        { role: 'tool', toolCallId: 'call_0', tool: 'lookup', content: 'shipped' },
        { role: 'tool', toolCallId: 'call_9', tool: 'lookup', content: 'boom', isError: true },
      ],
    };
    const { parts, error } = await call(openai(), body);
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'tool_call', call: { id: 'call_1', name: 'lookup', args: { order: 'A7' } } },
      { type: 'usage', usage: { inputTokens: 20, outputTokens: 5 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    const sent = lastBody();
    expect(sent['tools']).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Find an order',
          parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
        },
      },
    ]);
    expect((sent['messages'] as unknown[]).slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'lookup', arguments: '{"order":"A6"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: 'shipped' },
      { role: 'tool', tool_call_id: 'call_9', content: 'boom' },
    ]);
  });

  it('sends inline attachments as the vendor content parts after the text', async () => {
    server.enqueue(openaiText('a cat'));
    const data = Buffer.from('fake png bytes').toString('base64');
    const { error } = await call(openai(), {
      ...request,
      messages: [
        {
          role: 'user',
          content: 'what is this?',
          attachments: [{ kind: 'image', mediaType: 'image/png', name: 'cat.png', sha256: 'x', data }],
        },
      ],
    });
    expect(error).toBeUndefined();
    expect((lastBody()['messages'] as unknown[]).at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
      ],
    });
  });

  it('maps a 429 to status, code and Retry-After (seconds, HTTP date, and -ms)', async () => {
    const clock = fakeClock({ now: Date.parse('2026-01-01T00:00:00Z') });
    server.enqueue(
      openaiError(429, 'Rate limit reached', { 'retry-after': '7' }),
      openaiError(429, 'Rate limit reached', { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }),
      openaiError(429, 'Rate limit reached', { 'retry-after-ms': '1500', 'retry-after': '9' }),
    );
    const provider = openai({ clock });
    const errors = [await call(provider), await call(provider), await call(provider)].map((result) =>
      providerError(result.error),
    );
    expect(errors.map((error) => [error.status, error.code, error.retryAfterMs])).toEqual([
      [429, 'code_429', 7000],
      [429, 'code_429', 30_000],
      [429, 'code_429', 1500],
    ]);
    expect(errors[0]?.message).toContain('Rate limit reached');
  });

  it('scrubs the key when the error echoes it', async () => {
    server.enqueue(openaiError(401, `Incorrect API key provided: ${secret}`));
    const error = providerError((await call(openai())).error);
    expect(error.status).toBe(401);
    expect(error.message).not.toContain(secret);
    expect(error.message).toContain('***');
  });

  it('fails with a connection code when nothing listens', async () => {
    const gone = await startSseServer();
    await gone.close();
    const provider = aiSdkProvider({
      model: createOpenAI({ apiKey: 'k', baseURL: `${gone.url}/v1` }).chat('m'),
    });
    const error = providerError((await call(provider)).error);
    expect(error.status).toBeUndefined();
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('fails with malformed_response, not a TypeError, when a streamed chunk is not JSON', async () => {
    server.enqueue({ sse: [{ data: chunk({ content: 'Hel' }) }, { raw: 'data: {not json\n\n' }] });
    const { parts, error } = await call(openai());
    expect(parts).toEqual([{ type: 'text', delta: 'Hel' }]);
    expect(providerError(error)).toMatchObject({ status: 502, code: 'malformed_response' });
  });

  it('fails as interrupted when the stream is cut before the model finished', async () => {
    server.enqueue({ sse: [{ data: chunk({ content: 'Hel' }) }], end: 'cut' });
    const error = providerError((await call(openai())).error);
    expect(error.status).toBeUndefined();
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(error.code);
    expect(error.message).toMatch(/^stream interrupted: /);
  });

  it('makes one model per key and model id and reuses it', async () => {
    const made: string[] = [];
    const factory: AiSdkModelFactory = (apiKey, modelId) => {
      made.push(`${apiKey}/${modelId}`);
      return createOpenAI({ apiKey, baseURL: `${server.url}/v1` }).chat(modelId);
    };
    const provider = aiSdkProvider({ model: factory });
    server.enqueue(openaiText('a'), openaiText('b'), openaiText('c'), openaiText('d'));
    const signal = new AbortController().signal;
    for (const [key, model] of [
      ['k1', 'm1'],
      ['k1', 'm1'],
      ['k2', 'm1'],
      ['k1', 'm2'],
    ] as const) {
      await collect(
        provider.stream({ ...request, model }, { signal, credential: { profileId: key, secret: key } }),
      );
    }
    expect(made).toEqual(['k1/m1', 'k2/m1', 'k1/m2']);
    expect(server.requests.map((received) => received.headers.authorization)).toEqual([
      'Bearer k1',
      'Bearer k1',
      'Bearer k2',
      'Bearer k1',
    ]);
  });

  it('sends the request closed to the server and rethrows the reason when the signal aborts mid-stream', async () => {
    const hanging = await startHangingServer([{ data: chunk({ content: 'Hel' }) }]);
    try {
      const provider = aiSdkProvider({
        model: createOpenAI({ apiKey: 'k', baseURL: `${hanging.url}/v1` }).chat('m'),
      });
      const controller = new AbortController();
      const reason = new Error('user abort');
      const parts: ModelPart[] = [];
      const reading = (async () => {
        for await (const part of provider.stream(request, { signal: controller.signal })) {
          parts.push(part);
          controller.abort(reason);
        }
      })();
      await expect(reading).rejects.toBe(reason);
      await hanging.closed;
      expect(parts).toEqual([{ type: 'text', delta: 'Hel' }]);
    } finally {
      await hanging.close();
    }
  });

  it('gives a factory the configured key when the call brings no credential, and fails without one', async () => {
    const keys: string[] = [];
    const factory: AiSdkModelFactory = (apiKey, modelId) => {
      keys.push(apiKey);
      return createOpenAI({ apiKey, baseURL: `${server.url}/v1` }).chat(modelId);
    };
    server.enqueue(openaiText('a'));
    const signal = new AbortController().signal;
    const configured = await collect(
      aiSdkProvider({ model: factory, apiKey: 'sk-configured' }).stream(request, { signal }),
    );
    expect(configured.error).toBeUndefined();
    const missing = await collect(aiSdkProvider({ model: factory }).stream(request, { signal }));
    expect(providerError(missing.error)).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(keys).toEqual(['sk-configured']);
    expect(server.requests.map((received) => received.headers.authorization)).toEqual([
      'Bearer sk-configured',
    ]);
  });

  it('refuses options that hold no model, and a factory that makes none, with invalid_input', async () => {
    expect(() => aiSdkProvider({ model: {} as never })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
    expect(() => aiSdkProvider({ model: (() => null) as never, maxOutputTokens: 0 })).toThrow(
      /maxOutputTokens/,
    );
    const provider = aiSdkProvider({ model: (() => ({ specificationVersion: 'v1' })) as never });
    const { error } = await call(provider);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(server.requests).toEqual([]);
  });
});

describe('aiSdkProvider with @ai-sdk/anthropic', () => {
  let server: SseServer;
  const anthropic = (): ModelProvider =>
    aiSdkProvider({
      model: (apiKey, modelId) => createAnthropic({ apiKey, baseURL: `${server.url}/v1` })(modelId),
    });
  const call = (body: ModelRequest) =>
    collect(
      anthropic().stream(body, {
        signal: new AbortController().signal,
        credential: { profileId: 'a', secret },
      }),
    );

  beforeEach(async () => {
    server = await startSseServer();
  });
  afterEach(() => server.close());

  it('yields reasoning and text and asks for the thinking budget of the level', async () => {
    server.enqueue({
      sse: [
        messageStart(9),
        ...block(0, 'thinking', 'Let me ', 'see.'),
        ...block(1, 'text', 'Yes.'),
        ...messageEnd('end_turn', 4),
      ],
    });
    const { parts, error } = await call({ ...request, model: 'claude-test', thinking: 'low' });
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'reasoning', delta: 'Let me ' },
      { type: 'reasoning', delta: 'see.' },
      { type: 'text', delta: 'Yes.' },
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 4 } },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(server.requests[0]?.headers['x-api-key']).toBe(secret);
    expect(server.requests[0]?.body).toMatchObject({
      model: 'claude-test',
      system: [{ type: 'text', text: 'You are terse.' }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
  });

  it('maps an overloaded error inside a 200 stream to status 529', async () => {
    server.enqueue({
      sse: [
        messageStart(9),
        frame({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      ],
    });
    const error = providerError((await call(request)).error);
    expect(error).toMatchObject({ status: 529, code: 'overloaded_error' });
    expect(error.message).toContain('Overloaded');
  });

  it('maps a 529 response with its error type as the code', async () => {
    server.enqueue({
      status: 529,
      json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    expect(providerError((await call(request)).error)).toMatchObject({
      status: 529,
      code: 'overloaded_error',
    });
  });

  it('answers from text after a tool round-trip', async () => {
    server.enqueue(anthropicText('done'));
    const { parts } = await call({
      ...request,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'tu_1', name: 'lookup', args: { q: 1 } }] },
        { role: 'tool', toolCallId: 'tu_1', tool: 'lookup', content: 'found' },
      ],
    });
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect((server.requests[0]?.body as { messages: unknown[] }).messages.slice(1)).toMatchObject([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'found' }] },
    ]);
  });
});
