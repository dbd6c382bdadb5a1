import { APICallError, type LanguageModelV2, type LanguageModelV2CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { aiSdkProvider } from 'agentlanes/ai-sdk';
import { isRuntimeError } from '../../src/core/errors.js';
import { ProviderError, type ModelPart, type ModelRequest } from '../../src/providers/model-provider.js';

const request: ModelRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [{ name: 'lookup', description: 'Look up', inputSchema: { type: 'object' } }],
};

/** A spec v2 model (the `ai` 5 line) that streams `parts` and records the options of each call. */
function v2Model(parts: readonly unknown[]) {
  const calls: LanguageModelV2CallOptions[] = [];
  const model: LanguageModelV2 = {
    specificationVersion: 'v2',
    provider: 'test.v2',
    modelId: 'v2-model',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: (options) => {
      calls.push(options);
      const stream = new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return Promise.resolve({ stream: stream as never });
    },
  };
  return { model, calls };
}

async function collect(parts: readonly unknown[], signal = new AbortController().signal) {
  const { model, calls } = v2Model(parts);
  const received: ModelPart[] = [];
  try {
    for await (const part of aiSdkProvider({ model }).stream(request, { signal })) received.push(part);
    return { parts: received, calls, error: undefined as unknown };
  } catch (error) {
    return { parts: received, calls, error };
  }
}

const finish = (finishReason: string, inputTokens = 5, outputTokens = 2) => ({
  type: 'finish',
  finishReason,
  usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
});

describe('aiSdkProvider with a spec v2 model', () => {
  it('folds text, reasoning, a tool call given only as input deltas, flat usage and a string finish reason', async () => {
    const { parts, calls, error } = await collect([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
      { type: 'text-delta', id: 't', delta: 'Looking' },
      { type: 'tool-input-start', id: 'c1', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"q":' },
      { type: 'tool-input-delta', id: 'c1', delta: '1}' },
      { type: 'tool-input-end', id: 'c1' },
      finish('tool-calls'),
    ]);
    expect(error).toBeUndefined();
    expect(parts).toEqual([
      { type: 'reasoning', delta: 'hmm' },
      { type: 'text', delta: 'Looking' },
      { type: 'tool_call', call: { id: 'c1', name: 'lookup', args: { q: 1 } } },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 2 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(calls[0]).toMatchObject({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ type: 'function', name: 'lookup', description: 'Look up', inputSchema: { type: 'object' } }],
      toolChoice: { type: 'auto' },
    });
    expect(calls[0]?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('yields a tool-call part once, and none for a tool the vendor ran itself', async () => {
    const { parts } = await collect([
      { type: 'tool-input-start', id: 'c1', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"q":1}' },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"q":1}' },
      { type: 'tool-call', toolCallId: 'ws', toolName: 'web_search', input: '{}', providerExecuted: true },
      finish('stop'),
    ]);
    expect(parts).toEqual([
      { type: 'tool_call', call: { id: 'c1', name: 'lookup', args: { q: 1 } } },
      { type: 'usage', usage: { inputTokens: 5, outputTokens: 2 } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
  });

  it('maps an APICallError streamed as an error part, Retry-After included', async () => {
    const rateLimited = new APICallError({
      message: 'Too many requests',
      url: 'http://127.0.0.1/v1',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after-ms': '2500' },
      data: { error: { type: 'rate_limit_error' } },
    });
    const { parts, error } = await collect([
      { type: 'text-delta', id: 't', delta: 'a' },
      { type: 'error', error: rateLimited },
    ]);
    expect(parts).toEqual([{ type: 'text', delta: 'a' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_error', retryAfterMs: 2500 });
  });

  it.each([
    ['a part that is not an object', ['oops']],
    ['a text delta that is not a string', [{ type: 'text-delta', id: 't', delta: 42 }]],
    ['a tool call without a name', [{ type: 'tool-call', toolCallId: 'c', input: '{}' }]],
    ['tool arguments that are not JSON', [{ type: 'tool-call', toolCallId: 'c', toolName: 'x', input: '{' }]],
  ])('fails with malformed_response, not a TypeError, on %s', async (_what, parts) => {
    const { error } = await collect(parts);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 502, code: 'malformed_response' });
  });

  it('fails as interrupted when the stream ends without a finish part', async () => {
    const { error } = await collect([{ type: 'text-delta', id: 't', delta: 'a' }]);
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect(error).toBeInstanceOf(ProviderError);
  });

  it('fails with a RuntimeError when doStream hands back no stream', async () => {
    const { model } = v2Model([]);
    const broken: LanguageModelV2 = { ...model, doStream: () => Promise.resolve({} as never) };
    const stream = aiSdkProvider({ model: broken }).stream(request, { signal: new AbortController().signal });
    const error = await (async () => {
      try {
        for await (const _part of stream) void _part;
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(isRuntimeError(error, 'internal')).toBe(true);
    expect((error as Error).message).toContain('test.v2/v2-model');
  });
});
