import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import {
  ProviderError,
  type ModelCallOptions,
  type ModelPart,
  type ModelRequest,
} from '../../src/providers/model-provider.js';
import { openaiProvider, type OpenAIProviderOptions } from '../../src/providers/openai/openai-provider.js';
import {
  startSseServer,
  type ScriptedResponse,
  type SseFrame,
  type SseServer,
} from '../support/sse-server.js';

const secret = 'sk-test-0123456789abcdef';

const request: ModelRequest = {
  model: 'gpt-test',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
};

/** One `chat.completion.chunk` with a single choice. */
function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The last chunk `stream_options.include_usage` asks for: no choices, the usage. */
function usageChunk(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-test',
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

const done: SseFrame = { data: '[DONE]' };

/** A complete streamed completion: the chunks, then `[DONE]`. */
function completion(...chunks: Record<string, unknown>[]): ScriptedResponse {
  return { sse: [...chunks.map((data) => ({ data })), done] };
}

function apiError(status: number, error: Record<string, unknown>, headers?: Record<string, string>) {
  return { status, json: { error }, ...(headers === undefined ? {} : { headers }) };
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

describe('openaiProvider', () => {
  let server: SseServer;
  const call = (
    options: OpenAIProviderOptions = {},
    body: ModelRequest = request,
    callOptions: Partial<ModelCallOptions> = {},
  ) =>
    collect(
      openaiProvider({ baseURL: `${server.url}/v1`, ...options }).stream(body, {
        signal: new AbortController().signal,
        credential: { profileId: 'oa-1', secret },
        ...callOptions,
      }),
    );
  const lastBody = () => server.requests.at(-1)?.body as Record<string, unknown>;

  beforeEach(async () => {
    server = await startSseServer();
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server.close();
  });

  it('yields text deltas in order, then usage and finish, when the answer streams in several chunks', async () => {
    server.enqueue(
      completion(
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hel' }),
        chunk({ content: 'lo, ' }),
        chunk({ content: 'world' }),
        chunk({}, 'stop'),
        usageChunk(12, 3),
      ),
    );
    const { parts, error } = await call();
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo, ' },
      { type: 'text', delta: 'world' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('yields one tool_call per call when the deltas of two parallel calls are split across chunks', async () => {
    const fragment = (index: number, fields: Record<string, unknown>, args?: string) => ({
      index,
      ...fields,
      function: { ...(fields['name'] === undefined ? {} : { name: fields['name'] }), arguments: args ?? '' },
    });
    server.enqueue(
      completion(
        chunk({
          role: 'assistant',
          content: null,
          tool_calls: [fragment(0, { id: 'call_a', type: 'function', name: 'search' })],
        }),
        chunk({ tool_calls: [fragment(0, {}, '{"q":')] }),
        chunk({ tool_calls: [fragment(1, { id: 'call_b', type: 'function', name: 'weather' }, '{"ci')] }),
        chunk({ tool_calls: [fragment(0, {}, '"cats"}'), fragment(1, {}, 'ty":"Oslo",')] }),
        chunk({ tool_calls: [fragment(1, {}, '"days":[1,2]}')] }),
        chunk({}, 'tool_calls'),
        usageChunk(40, 25),
      ),
    );
    const { parts, error } = await call();
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'tool_call', call: { id: 'call_a', name: 'search', args: { q: 'cats' } } },
      { type: 'tool_call', call: { id: 'call_b', name: 'weather', args: { city: 'Oslo', days: [1, 2] } } },
      { type: 'usage', usage: { inputTokens: 40, outputTokens: 25 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('parses a tool call with no argument text as {} when the tool takes no parameters', async () => {
    server.enqueue(
      completion(
        chunk({
          tool_calls: [
            { index: 0, id: 'call_n', type: 'function', function: { name: 'now', arguments: '' } },
          ],
        }),
        chunk({}, 'tool_calls'),
      ),
    );
    const { parts } = await call();
    expect(parts[0]).toEqual({ type: 'tool_call', call: { id: 'call_n', name: 'now', args: {} } });
  });

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['content_filter', 'stop'],
  ])('reports finish %s as %s when the server ends with that finish_reason', async (reason, expected) => {
    server.enqueue(completion(chunk({ content: 'x' }), chunk({}, reason)));
    const { parts } = await call();
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: expected });
    expect(parts.some((part) => part.type === 'usage')).toBe(false);
  });

  it('reports tool_calls when a compatible server returns tool calls with finish_reason stop', async () => {
    server.enqueue(
      completion(
        chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'search', arguments: '{}' } }] }),
        chunk({}, 'stop'),
      ),
    );
    const { parts } = await call();
    expect(parts.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  it('yields reasoning deltas when the server streams reasoning_content or reasoning', async () => {
    server.enqueue(
      completion(
        chunk({ reasoning_content: 'think ' }),
        chunk({ reasoning: 'more' }),
        chunk({ content: 'answer' }),
        chunk({}, 'stop'),
      ),
    );
    const { parts } = await call();
    expect(parts.slice(0, 3)).toEqual([
      { type: 'reasoning', delta: 'think ' },
      { type: 'reasoning', delta: 'more' },
      { type: 'text', delta: 'answer' },
    ]);
  });

  it('sends model, system, mapped messages, tools, reasoning_effort and stream options when given a full request', async () => {
    server.enqueue(completion(chunk({ content: 'ok' }), chunk({}, 'stop')));
    const inputSchema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    await call(
      {},
      {
        model: 'gpt-4o-mini',
        system: 'You are terse.',
        thinking: 'medium',
        tools: [{ name: 'search', description: 'Search the web', inputSchema }],
        messages: [
          { role: 'user', content: 'find cats' },
          {
            role: 'assistant',
            content: '',
            toolCalls: [{ id: 'call_1', name: 'search', args: { q: 'cats' } }],
          },
          { role: 'tool', toolCallId: 'call_1', tool: 'search', content: '3 cats' },
          { role: 'assistant', content: 'Found 3 cats.' },
          { role: 'user', content: 'thanks' },
        ],
      },
    );
    const received = server.requests.at(-1);
    expect(received?.method).toBe('POST');
    expect(received?.path).toBe('/v1/chat/completions');
    expect(received?.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'medium',
      tools: [
        {
          type: 'function',
          function: { name: 'search', description: 'Search the web', parameters: inputSchema },
        },
      ],
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'find cats' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"q":"cats"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '3 cats' },
        { role: 'assistant', content: 'Found 3 cats.' },
        { role: 'user', content: 'thanks' },
      ],
    });
  });

  it.each(['minimal', 'low', 'high'] as const)(
    'sends reasoning_effort %s when thinking is %s',
    async (level) => {
      server.enqueue(completion(chunk({}, 'stop')));
      await call({}, { ...request, thinking: level });
      expect(lastBody()['reasoning_effort']).toBe(level);
    },
  );

  it('omits reasoning_effort, tools and the system message when thinking is off and there are none', async () => {
    server.enqueue(completion(chunk({}, 'stop')));
    await call({}, { ...request, thinking: 'off' });
    expect(lastBody()).toEqual({
      model: 'gpt-test',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('posts under the path prefix when baseURL has one', async () => {
    server.enqueue(completion(chunk({}, 'stop')));
    await call({ baseURL: `${server.url}/api/openai/v1/` });
    expect(server.requests.at(-1)?.path).toBe('/api/openai/v1/chat/completions');
  });

  it('sends the call credential as the bearer token when both a credential and an apiKey are given', async () => {
    server.enqueue(completion(chunk({}, 'stop')));
    await call({
      apiKey: 'sk-configured',
      organization: 'org-1',
      defaultHeaders: { 'X-Title': 'agentlanes' },
    });
    const headers = server.requests.at(-1)?.headers;
    expect(headers?.authorization).toBe(`Bearer ${secret}`);
    expect(headers?.['openai-organization']).toBe('org-1');
    expect(headers?.['x-title']).toBe('agentlanes');
  });

  it('reads the environment variable at call time when apiKey is { env } and no credential is given', async () => {
    const provider = openaiProvider({
      baseURL: `${server.url}/v1`,
      apiKey: { env: 'AGENTLANES_TEST_OPENAI_KEY' },
    });
    vi.stubEnv('AGENTLANES_TEST_OPENAI_KEY', 'sk-from-env');
    server.enqueue(completion(chunk({}, 'stop')));
    await collect(provider.stream(request, { signal: new AbortController().signal }));
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer sk-from-env');
  });

  it('throws missing_api_key without sending a request when the apiKey environment variable is unset', async () => {
    vi.stubEnv('AGENTLANES_TEST_OPENAI_KEY', '');
    const provider = openaiProvider({
      baseURL: `${server.url}/v1`,
      apiKey: { env: 'AGENTLANES_TEST_OPENAI_KEY' },
    });
    const { error } = await collect(provider.stream(request, { signal: new AbortController().signal }));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 401, code: 'missing_api_key' });
    expect(server.requests).toHaveLength(0);
  });

  it('sends no Authorization header when neither a credential nor an apiKey is given', async () => {
    server.enqueue(completion(chunk({}, 'stop')));
    const provider = openaiProvider({ baseURL: `${server.url}/v1` });
    const { error } = await collect(provider.stream(request, { signal: new AbortController().signal }));
    expect(error).toBeUndefined();
    expect(server.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it.each([
    {
      status: 429,
      headers: { 'retry-after': '7' },
      error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' },
      expected: {
        status: 429,
        code: 'rate_limit_exceeded',
        message: 'Rate limit reached for requests',
        retryAfterMs: 7000,
      },
    },
    {
      status: 401,
      error: { message: 'Invalid authentication', type: 'invalid_request_error', code: 'invalid_api_key' },
      expected: {
        status: 401,
        code: 'invalid_api_key',
        message: 'Invalid authentication',
        retryAfterMs: undefined,
      },
    },
    {
      status: 402,
      error: { message: 'Insufficient credits', type: 'billing_error', code: null },
      expected: {
        status: 402,
        code: 'billing_error',
        message: 'Insufficient credits',
        retryAfterMs: undefined,
      },
    },
    {
      status: 500,
      error: { message: 'The server had an error', type: 'server_error', code: null },
      expected: {
        status: 500,
        code: 'server_error',
        message: 'The server had an error',
        retryAfterMs: undefined,
      },
    },
    {
      status: 529,
      headers: { 'retry-after-ms': '1500' },
      error: { message: 'Overloaded', type: 'overloaded_error' },
      expected: { status: 529, code: 'overloaded_error', message: 'Overloaded', retryAfterMs: 1500 },
    },
  ])(
    'throws a ProviderError with status $status, code and message when the API answers $status',
    async (example) => {
      server.enqueue(apiError(example.status, example.error, example.headers));
      const { parts, error } = await call();
      expect(parts).toEqual([]);
      expect(error).toBeInstanceOf(ProviderError);
      const { status, code, message, retryAfterMs } = error as ProviderError;
      expect({ status, code, message, retryAfterMs }).toEqual(example.expected);
      expect(server.requests).toHaveLength(1);
    },
  );

  it('measures retryAfterMs on the clock when retry-after is an HTTP date', async () => {
    const date = 'Wed, 21 Oct 2015 07:28:00 GMT';
    server.enqueue(apiError(503, { message: 'busy' }, { 'retry-after': date }));
    const { error } = await call({ clock: { now: () => Date.parse(date) - 4000 } });
    expect(error).toMatchObject({ status: 503, retryAfterMs: 4000 });
  });

  it('uses the bare body as the message when the server answers with a non-OpenAI error body', async () => {
    server.enqueue({ status: 404, json: { error: 'model "llama9" not found, try pulling it first' } });
    const { error } = await call();
    expect(error).toMatchObject({ status: 404, message: 'model "llama9" not found, try pulling it first' });
  });

  it('scrubs the secret from the message when the server echoes the API key in its error', async () => {
    server.enqueue(
      apiError(401, {
        message: `Incorrect API key provided: ${secret}. Bearer ${secret}`,
        code: 'invalid_api_key',
      }),
    );
    const { error } = await call();
    expect(error).toBeInstanceOf(ProviderError);
    const providerError = error as ProviderError;
    expect(providerError.message).toBe('Incorrect API key provided: ***. Bearer ***');
    expect(
      JSON.stringify({ ...providerError, message: providerError.message, stack: providerError.stack }),
    ).not.toContain(secret);
    expect(providerError.cause).toBeUndefined();
  });

  it('throws the error event, scrubbed, when the server sends an error inside the stream', async () => {
    server.enqueue({
      sse: [
        { data: chunk({ content: 'par' }) },
        { data: { error: { message: `upstream rejected key ${secret}`, code: 502 } } },
      ],
    });
    const { parts, error } = await call();
    expect(parts).toEqual([{ type: 'text', delta: 'par' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502, message: 'upstream rejected key ***' });
  });

  it('throws ECONNRESET without a status after the text so far when the connection is cut mid-stream', async () => {
    server.enqueue({
      sse: [{ data: chunk({ content: 'Hello' }) }, { data: chunk({ content: ' wor' }) }],
      end: 'cut',
    });
    const { parts, error } = await call();
    expect(parts).toEqual([
      { type: 'text', delta: 'Hello' },
      { type: 'text', delta: ' wor' },
    ]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: undefined, code: 'ECONNRESET' });
    expect((error as Error).message).toMatch(/stream interrupted/);
  });

  it('throws ECONNRESET when the stream ends cleanly before any finish_reason', async () => {
    server.enqueue({ sse: [{ data: chunk({ content: 'Hel' }) }] });
    const { parts, error } = await call();
    expect(parts).toEqual([{ type: 'text', delta: 'Hel' }]);
    expect(error).toMatchObject({ status: undefined, code: 'ECONNRESET' });
  });

  it('throws ECONNREFUSED when nothing listens at baseURL', async () => {
    const closed = await startSseServer();
    await closed.close();
    const { error } = await call({ baseURL: `${closed.url}/v1` });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: undefined, code: 'ECONNREFUSED' });
  });

  it('throws malformed_response with status 502 when an SSE frame holds invalid JSON', async () => {
    server.enqueue({ sse: [{ data: chunk({ content: 'ok' }) }, { raw: 'data: {"choices": [\n\n' }, done] });
    const { parts, error } = await call();
    expect(parts).toEqual([{ type: 'text', delta: 'ok' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502, code: 'malformed_response' });
  });

  it('throws malformed_response with status 502 when tool call arguments are not valid JSON', async () => {
    server.enqueue(
      completion(
        chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'search', arguments: '{"q": "ca' } }] }),
        chunk({}, 'tool_calls'),
      ),
    );
    const { parts, error } = await call();
    expect(parts.filter((part) => part.type === 'tool_call')).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      status: 502,
      code: 'malformed_response',
      message: 'malformed tool call arguments for search',
    });
  });

  it('rejects with the signal reason, not a ProviderError, when the signal aborts mid-stream', async () => {
    server.enqueue({ sse: [{ data: chunk({ content: 'Hel' }) }], end: 'hang' });
    const controller = new AbortController();
    const reason = new Error('user sent /stop');
    const parts: ModelPart[] = [];
    let caught: unknown;
    try {
      const provider = openaiProvider({ baseURL: `${server.url}/v1`, apiKey: secret });
      for await (const part of provider.stream(request, { signal: controller.signal })) {
        parts.push(part);
        controller.abort(reason);
      }
    } catch (error) {
      caught = error;
    }
    expect(parts).toEqual([{ type: 'text', delta: 'Hel' }]);
    expect(caught).toBe(reason);
  });

  it('rejects with the signal reason without a request when the signal is already aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    const { error } = await call({}, request, { signal: controller.signal });
    expect(error).toBe(reason);
    expect(server.requests).toHaveLength(0);
  });

  it('throws invalid_input at construction when the options are bad', () => {
    expect(() => openaiProvider({ baseURL: 'not a url' })).toThrow(
      expect.toSatisfy((error: unknown) => isRuntimeError(error, 'invalid_input')),
    );
    expect(() => openaiProvider({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});
