import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { isRuntimeError } from '../../src/core/errors.js';
import { anthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import {
  ProviderError,
  type ModelCallOptions,
  type ModelPart,
  type ModelRequest,
} from '../../src/providers/model-provider.js';
import {
  startSseServer,
  type ScriptedResponse,
  type SseFrame,
  type SseServer,
} from '../support/sse-server.js';

const request: ModelRequest = {
  model: 'claude-test',
  system: 'You are terse.',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
};

const key = 'sk-ant-test-0123456789';

/** An Anthropic stream event as a frame: `event: <type>` then its JSON. */
function frame(data: { type: string } & Record<string, unknown>): SseFrame {
  return { event: data.type, data };
}

function messageStart(inputTokens: number): SseFrame {
  return frame({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [],
      model: 'claude-test',
      stop_reason: null,
      usage: { input_tokens: inputTokens, output_tokens: 1 },
    },
  });
}

function textBlock(index: number, ...deltas: string[]): SseFrame[] {
  return [
    frame({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
    ...deltas.map((text) =>
      frame({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
    ),
    frame({ type: 'content_block_stop', index }),
  ];
}

function toolBlock(index: number, id: string, name: string, ...jsonParts: string[]): SseFrame[] {
  return [
    frame({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
    ...jsonParts.map((partial_json) =>
      frame({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    frame({ type: 'content_block_stop', index }),
  ];
}

function messageEnd(stopReason: string, outputTokens: number): SseFrame[] {
  return [
    frame({
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }),
    frame({ type: 'message_stop' }),
  ];
}

function sse(...frames: (SseFrame | SseFrame[])[]): ScriptedResponse {
  return { sse: frames.flat() };
}

function errorBody(
  type: string,
  message: string,
): { type: 'error'; error: { type: string; message: string } } {
  return { type: 'error', error: { type, message } };
}

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

const call = (): ModelCallOptions => ({ signal: new AbortController().signal });

describe('anthropicProvider', () => {
  let server: SseServer;

  beforeEach(async () => {
    server = await startSseServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const provider = (options: Parameters<typeof anthropicProvider>[0] = {}) =>
    anthropicProvider({ baseURL: server.url, apiKey: key, ...options });

  it('streams text deltas, then usage and finish, when the answer comes in several deltas', async () => {
    server.enqueue(sse(messageStart(12), textBlock(0, 'Hel', 'lo', ' there'), messageEnd('end_turn', 5)));
    const { parts, error } = await collect(provider().stream(request, call()));
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'text', delta: ' there' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 5 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('yields one tool_call with the joined input when input_json_delta is split across frames', async () => {
    server.enqueue(
      sse(
        messageStart(3),
        toolBlock(0, 'toolu_1', 'search', '{"q": "we', 'ather", "lim', 'it": 3}'),
        messageEnd('tool_use', 9),
      ),
    );
    const { parts } = await collect(provider().stream(request, call()));
    expect(parts).toEqual([
      { type: 'tool_call', call: { id: 'toolu_1', name: 'search', args: { q: 'weather', limit: 3 } } },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 9 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('yields each tool call at its block stop when text precedes two tool_use blocks', async () => {
    server.enqueue(
      sse(
        messageStart(3),
        textBlock(0, 'Checking.'),
        toolBlock(1, 'toolu_a', 'search', '{"q":"a"}'),
        toolBlock(2, 'toolu_b', 'clock'),
        messageEnd('tool_use', 20),
      ),
    );
    const { parts } = await collect(provider().stream(request, call()));
    expect(parts.slice(0, 3)).toEqual([
      { type: 'text', delta: 'Checking.' },
      { type: 'tool_call', call: { id: 'toolu_a', name: 'search', args: { q: 'a' } } },
      { type: 'tool_call', call: { id: 'toolu_b', name: 'clock', args: {} } },
    ]);
  });

  it('yields thinking deltas as reasoning when the answer starts with a thinking block', async () => {
    server.enqueue(
      sse(
        messageStart(3),
        frame({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        }),
        frame({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'thinking_delta', thinking: 'Let me ' },
        }),
        frame({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'thinking_delta', thinking: 'think.' },
        }),
        frame({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'signature_delta', signature: 'sig' },
        }),
        frame({ type: 'content_block_stop', index: 0 }),
        { event: 'ping', data: { type: 'ping' } },
        textBlock(1, 'Done.'),
        messageEnd('end_turn', 30),
      ),
    );
    const { parts } = await collect(provider().stream({ ...request, thinking: 'low' }, call()));
    expect(parts.slice(0, 3)).toEqual([
      { type: 'reasoning', delta: 'Let me ' },
      { type: 'reasoning', delta: 'think.' },
      { type: 'text', delta: 'Done.' },
    ]);
  });

  it('reports input tokens from message_start plus cache tokens, and output tokens from message_delta', async () => {
    server.enqueue(
      sse(
        frame({
          type: 'message_start',
          message: {
            usage: {
              input_tokens: 10,
              cache_read_input_tokens: 100,
              cache_creation_input_tokens: 5,
              output_tokens: 1,
            },
          },
        }),
        textBlock(0, 'ok'),
        messageEnd('end_turn', 42),
      ),
    );
    const { parts } = await collect(provider().stream(request, call()));
    expect(parts).toContainEqual({ type: 'usage', usage: { inputTokens: 115, outputTokens: 42 } });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['tool_use', 'tool_calls'],
    ['max_tokens', 'length'],
  ])('finishes with the mapped reason when stop_reason is %s', async (stopReason, reason) => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'x'), messageEnd(stopReason, 1)));
    const { parts } = await collect(provider().stream(request, call()));
    expect(parts.at(-1)).toEqual({ type: 'finish', reason });
  });

  it('sends merged, alternating messages, tools, system and the key when the conversation has tool results', async () => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)));
    const conversation: ModelRequest = {
      model: 'claude-test',
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'find a' },
        { role: 'user', content: 'and b' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            { id: 'toolu_1', name: 'search', args: { q: 'a' } },
            { id: 'toolu_2', name: 'search', args: { q: 'b' } },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', tool: 'search', content: 'A!' },
        { role: 'tool', toolCallId: 'toolu_2', tool: 'search', content: 'boom', isError: true },
        { role: 'user', content: 'use metric units' },
      ],
      tools: [
        {
          name: 'search',
          description: 'Search the web',
          inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    };
    await collect(provider().stream(conversation, call()));
    const [received] = server.requests;
    expect(received?.path).toBe('/v1/messages');
    expect(received?.headers['x-api-key']).toBe(key);
    expect(received?.headers.authorization).toBeUndefined();
    expect(received?.body).toEqual({
      model: 'claude-test',
      max_tokens: 4096,
      stream: true,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'find a' },
            { type: 'text', text: 'and b' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'a' } },
            { type: 'tool_use', id: 'toolu_2', name: 'search', input: { q: 'b' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A!' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true },
            { type: 'text', text: 'use metric units' },
          ],
        },
      ],
      tools: [
        {
          name: 'search',
          description: 'Search the web',
          input_schema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    });
  });

  it('asks for a thinking budget and raises max_tokens above it when thinking is medium', async () => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)));
    await collect(provider({ maxTokens: 1000 }).stream({ ...request, thinking: 'medium' }, call()));
    expect(server.requests[0]?.body).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 4096 },
      max_tokens: 5096,
    });
  });

  it('sends no thinking when thinking is off or when the request continues a tool loop', async () => {
    server.enqueue(
      sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)),
      sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)),
    );
    await collect(provider().stream({ ...request, thinking: 'off' }, call()));
    const toolLoop: ModelRequest = {
      ...request,
      thinking: 'high',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_1', name: 'search', args: {} }] },
        { role: 'tool', toolCallId: 'toolu_1', tool: 'search', content: 'found' },
      ],
    };
    await collect(provider().stream(toolLoop, call()));
    for (const received of server.requests) {
      expect(received.body).not.toHaveProperty('thinking');
      expect(received.body).toMatchObject({ max_tokens: 4096 });
    }
  });

  it('sends the per-call credential over the configured key when a call brings one', async () => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)));
    await collect(
      provider().stream(request, {
        signal: new AbortController().signal,
        credential: { profileId: 'an-2', secret: 'sk-profile-2' },
      }),
    );
    expect(server.requests[0]?.headers['x-api-key']).toBe('sk-profile-2');
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('adds the configured default headers when defaultHeaders is set', async () => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)));
    await collect(provider({ defaultHeaders: { 'anthropic-beta': 'test-beta' } }).stream(request, call()));
    expect(server.requests[0]?.headers).toMatchObject({ 'anthropic-beta': 'test-beta', 'x-api-key': key });
  });

  it('reads the key from the environment at call time when apiKey names a variable', async () => {
    const variable = 'AGENTLANES_TEST_ANTHROPIC_KEY';
    const model = anthropicProvider({ baseURL: server.url, apiKey: { env: variable } });
    server.enqueue(sse(messageStart(1), textBlock(0, 'ok'), messageEnd('end_turn', 1)));
    process.env[variable] = 'sk-from-env';
    try {
      await collect(model.stream(request, call()));
    } finally {
      delete process.env[variable];
    }
    expect(server.requests[0]?.headers['x-api-key']).toBe('sk-from-env');
    const { error } = await collect(model.stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(server.requests).toHaveLength(1);
  });

  it('fails with rate_limit_error and retryAfterMs when the API answers 429 with retry-after seconds', async () => {
    server.enqueue({
      status: 429,
      headers: { 'retry-after': '7' },
      json: errorBody('rate_limit_error', 'Slow down'),
    });
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: 429, code: 'rate_limit_error', retryAfterMs: 7000 });
    expect((error as Error).message).toContain('Slow down');
    expect(server.requests).toHaveLength(1);
  });

  it('measures retry-after against the clock when it is an HTTP date', async () => {
    const clock = fakeClock({ now: Date.parse('2030-01-01T00:00:00Z') });
    server.enqueue({
      status: 429,
      headers: { 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' },
      json: errorBody('rate_limit_error', 'x'),
    });
    const { error } = await collect(provider({ clock }).stream(request, call()));
    expect(providerError(error).retryAfterMs).toBe(30_000);
  });

  it('fails with authentication_error when the API answers 401', async () => {
    server.enqueue({ status: 401, json: errorBody('authentication_error', 'invalid x-api-key') });
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({
      status: 401,
      code: 'authentication_error',
      retryAfterMs: undefined,
    });
  });

  it('fails with overloaded_error once, without retrying, when the API answers 529', async () => {
    server.enqueue({ status: 529, json: errorBody('overloaded_error', 'Overloaded') });
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: 529, code: 'overloaded_error' });
    expect(server.requests).toHaveLength(1);
  });

  it('fails with status 529 after the text so far when the stream carries an overloaded error frame', async () => {
    server.enqueue(
      sse(
        messageStart(1),
        frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Part' } }),
        { event: 'error', data: errorBody('overloaded_error', 'Overloaded') },
      ),
    );
    const { parts, error } = await collect(provider().stream(request, call()));
    expect(parts).toEqual([{ type: 'text', delta: 'Part' }]);
    expect(providerError(error)).toMatchObject({ status: 529, code: 'overloaded_error' });
    expect((error as Error).message).toContain('Overloaded');
  });

  it('fails with status 500 when the stream carries another error frame', async () => {
    server.enqueue(sse(messageStart(1), { event: 'error', data: errorBody('api_error', 'Internal') }));
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: 500, code: 'api_error' });
  });

  it('fails with ECONNRESET and no status when the connection is cut mid-stream', async () => {
    server.enqueue({ sse: [messageStart(1), ...textBlock(0, 'Hal')], end: 'cut' });
    const { parts, error } = await collect(provider().stream(request, call()));
    expect(parts).toEqual([{ type: 'text', delta: 'Hal' }]);
    expect(providerError(error)).toMatchObject({ status: undefined, code: 'ECONNRESET' });
    expect((error as Error).message).toMatch(/^Anthropic stream was cut: terminated/);
  });

  it('fails with ECONNRESET when the stream closes before message_stop', async () => {
    server.enqueue(sse(messageStart(1), textBlock(0, 'Hal')));
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: undefined, code: 'ECONNRESET' });
  });

  it('fails with a network code when nothing listens on the port', async () => {
    const model = provider();
    await server.close();
    const { error } = await collect(model.stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: undefined, code: 'ECONNREFUSED' });
    server = await startSseServer();
  });

  it('fails with malformed_response when an event is not JSON', async () => {
    server.enqueue(
      sse(messageStart(1), { raw: 'event: content_block_delta\ndata: {"type": "content_bl\n\n' }),
    );
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error)).toMatchObject({ status: 502, code: 'malformed_response' });
  });

  it('fails with malformed_response when a tool input is not JSON', async () => {
    server.enqueue(
      sse(messageStart(1), toolBlock(0, 'toolu_1', 'search', '{"q": '), messageEnd('tool_use', 1)),
    );
    const { parts, error } = await collect(provider().stream(request, call()));
    expect(parts).toEqual([]);
    expect(providerError(error)).toMatchObject({ status: 502, code: 'malformed_response' });
  });

  it('rethrows the abort reason when the signal aborts mid-stream', async () => {
    server.enqueue({ sse: [messageStart(1), ...textBlock(0, 'first')], end: 'hang' });
    const controller = new AbortController();
    const reason = new Error('user sent /stop');
    const parts: ModelPart[] = [];
    const consume = async (): Promise<void> => {
      for await (const part of provider().stream(request, { signal: controller.signal })) {
        parts.push(part);
        controller.abort(reason);
      }
    };
    await expect(consume()).rejects.toBe(reason);
    expect(parts).toEqual([{ type: 'text', delta: 'first' }]);
  });

  it('rethrows the abort reason without a request when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const { error } = await collect(provider().stream(request, { signal: controller.signal }));
    expect(error).toEqual(new Error('gone'));
    expect(server.requests).toHaveLength(0);
  });

  it('replaces the key with *** when an error message echoes it', async () => {
    server.enqueue({ status: 401, json: errorBody('authentication_error', `invalid x-api-key: ${key}`) });
    const { error } = await collect(provider().stream(request, call()));
    expect(providerError(error).message).toContain('invalid x-api-key: ***');
    expect(JSON.stringify(error) + String(error) + (error as Error).stack).not.toContain(key);
    expect((error as Error).cause).toBeUndefined();
  });

  it('throws invalid_input at construction when an option is malformed', () => {
    expect(() => anthropicProvider({ maxTokens: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }) as Error,
    );
    let thrown: unknown;
    try {
      anthropicProvider({ baseURL: 'not a url' });
    } catch (error) {
      thrown = error;
    }
    expect(isRuntimeError(thrown, 'invalid_input')).toBe(true);
  });
});
