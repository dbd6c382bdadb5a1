import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { z } from 'zod';
import { abortReason, maxDurationMs, systemClock, type Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import {
  ProviderError,
  type FinishReason,
  type ModelCallOptions,
  type ModelMessage,
  type ModelPart,
  type ModelProvider,
  type ModelRequest,
  type ToolCall,
  type Usage,
} from '../model-provider.js';
import { openaiInlineCapabilities } from '../../policies/index.js';
import { openaiUserContent } from './openai-content.js';
import { toProviderError } from './openai-errors.js';

const openaiProviderOptionsSchema = z.object({
  /** @default 'https://api.openai.com/v1' */
  baseURL: z.url().default('https://api.openai.com/v1'),
  /** Used when a call brings no credential; `{ env }` is read from `process.env` at call time. */
  apiKey: z.union([z.string().min(1), z.object({ env: z.string().min(1) })]).optional(),
  organization: z.string().min(1).optional(),
  defaultHeaders: z.record(z.string(), z.string()).optional(),
  /** Time to wait for the response headers; the SDK's default (10 minutes) when absent. */
  timeoutMs: z.number().int().positive().max(maxDurationMs).optional(),
  /**
   * Measures `Retry-After` HTTP dates.
   * @default systemClock
   */
  clock: z
    .custom<Pick<Clock, 'now'>>((value) => typeof (value as Clock | undefined)?.now === 'function')
    .optional(),
});

/** Options of `openaiProvider`. */
export type OpenAIProviderOptions = z.input<typeof openaiProviderOptionsSchema>;
type OpenAIProviderConfig = z.output<typeof openaiProviderOptionsSchema>;

/** A ModelProvider for OpenAI's chat completions API and compatible servers (vLLM, Ollama, OpenRouter…). */
export function openaiProvider(options: OpenAIProviderOptions = {}): ModelProvider {
  const parsed = openaiProviderOptionsSchema.safeParse(options);
  if (!parsed.success) {
    // No `cause`: the zod error holds the input, and the input may hold a key.
    throw new RuntimeError('invalid_input', `openaiProvider: ${z.prettifyError(parsed.error)}`);
  }
  const configuration = parsed.data;
  return {
    stream: (request, callOptions) => streamChat(configuration, request, callOptions),
    inlineCapabilities: openaiInlineCapabilities,
  };
}

async function* streamChat(
  configuration: OpenAIProviderConfig,
  request: ModelRequest,
  { signal, credential }: ModelCallOptions,
): AsyncGenerator<ModelPart> {
  if (signal.aborted) throw abortReason(signal);
  const secret = credential?.secret ?? resolveApiKey(configuration.apiKey);
  const state = createStreamState();
  try {
    const client = createClient(configuration, secret);
    const stream = await client.chat.completions.create(buildBody(request), { signal, maxRetries: 0 });
    for await (const chunk of stream) yield* readChunk(chunk, state);
  } catch (error) {
    if (signal.aborted) throw abortReason(signal);
    throw toProviderError(error, { secret, now: (configuration.clock ?? systemClock).now() });
  }
  // The SDK ends its stream quietly when the signal aborts.
  if (signal.aborted) throw abortReason(signal);
  if (state.finishReason === undefined) {
    throw new ProviderError('stream interrupted: the response ended before the model finished', {
      code: 'ECONNRESET',
    });
  }
  yield* finishParts(state);
}

function resolveApiKey(apiKey: OpenAIProviderConfig['apiKey']): string | undefined {
  if (apiKey === undefined || typeof apiKey === 'string') return apiKey;
  const value = process.env[apiKey.env];
  if (value === undefined || value.length === 0) {
    throw new ProviderError(`no API key: the environment variable ${apiKey.env} is not set`, {
      status: 401,
      code: 'missing_api_key',
    });
  }
  return value;
}

/** A client per call: cheap, and no secret outlives the call. Every SDK default read from env is pinned. */
function createClient(configuration: OpenAIProviderConfig, secret: string | undefined): OpenAI {
  const headers: Record<string, string | null> = { ...configuration.defaultHeaders };
  const hasAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
  // A keyless server (a local vLLM or Ollama): send no Authorization header at all.
  if (secret === undefined && !hasAuthorization) headers['Authorization'] = null;
  return new OpenAI({
    apiKey: secret ?? 'keyless',
    adminAPIKey: null,
    organization: configuration.organization ?? null,
    project: null,
    baseURL: configuration.baseURL,
    defaultHeaders: headers,
    maxRetries: 0,
    logLevel: 'off',
    ...(configuration.timeoutMs === undefined ? {} : { timeout: configuration.timeoutMs }),
  });
}

function buildBody(request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const system: ChatCompletionMessageParam[] =
    request.system === undefined || request.system.length === 0
      ? []
      : [{ role: 'system', content: request.system }];
  const tools = request.tools.map((tool): ChatCompletionTool => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: { ...tool.inputSchema } },
  }));
  const thinking = request.thinking ?? 'off';
  return {
    model: request.model,
    messages: [...system, ...request.messages.map(toOpenAIMessage)],
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length === 0 ? {} : { tools }),
    ...(thinking === 'off' ? {} : { reasoning_effort: thinking }),
  };
}

function toOpenAIMessage(message: ModelMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: openaiUserContent(message.content, message.attachments) };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content };
      return {
        role: 'assistant',
        content: message.content.length === 0 ? null : message.content,
        tool_calls: calls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        })),
      };
    }
  }
}

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

interface StreamState {
  readonly calls: Map<number, PendingCall>;
  usage: Usage | undefined;
  finishReason: string | undefined;
}

function createStreamState(): StreamState {
  return { calls: new Map(), usage: undefined, finishReason: undefined };
}

/** Text and reasoning deltas of one chunk; tool-call fragments, usage and the finish reason go to `state`. */
function readChunk(chunk: ChatCompletionChunk, state: StreamState): ModelPart[] {
  const parts: ModelPart[] = [];
  if (chunk.usage) {
    state.usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
  }
  // Only the first choice: the request never asks for more than one.
  const choice = chunk.choices?.[0];
  if (choice === undefined) return parts;
  const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & {
    reasoning_content?: unknown;
    reasoning?: unknown;
  };
  // DeepSeek and vLLM stream `reasoning_content`; OpenRouter and Ollama stream `reasoning`.
  const reasoning = delta.reasoning_content ?? delta.reasoning;
  if (typeof reasoning === 'string' && reasoning.length > 0)
    parts.push({ type: 'reasoning', delta: reasoning });
  if (typeof delta.content === 'string' && delta.content.length > 0) {
    parts.push({ type: 'text', delta: delta.content });
  }
  for (const [position, fragment] of (delta.tool_calls ?? []).entries()) {
    const index = fragment.index ?? position;
    const pending = state.calls.get(index) ?? { id: '', name: '', arguments: '' };
    if (fragment.id) pending.id = fragment.id;
    if (fragment.function?.name && pending.name.length === 0) pending.name = fragment.function.name;
    pending.arguments += fragment.function?.arguments ?? '';
    state.calls.set(index, pending);
  }
  if (choice.finish_reason) state.finishReason = choice.finish_reason;
  return parts;
}

/** The accumulated tool calls (in index order), the usage if reported, then the finish. */
function finishParts(state: StreamState): ModelPart[] {
  const indexes = [...state.calls.keys()].sort((left, right) => left - right);
  const calls = indexes.map((index) => toToolCall(index, state.calls.get(index) as PendingCall));
  const parts: ModelPart[] = calls.map((call) => ({ type: 'tool_call', call }));
  if (state.usage !== undefined) parts.push({ type: 'usage', usage: state.usage });
  parts.push({ type: 'finish', reason: finishReason(state.finishReason, calls.length > 0) });
  return parts;
}

function toToolCall(index: number, pending: PendingCall): ToolCall {
  // A tool without parameters may stream no arguments at all.
  const text = pending.arguments.trim().length === 0 ? '{}' : pending.arguments;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    throw new ProviderError(`malformed tool call arguments for ${pending.name || `call ${index}`}`, {
      status: 502,
      code: 'malformed_response',
    });
  }
  return { id: pending.id || `call_${index}`, name: pending.name, args };
}

/** Some compatible servers (older Ollama, vLLM) say `stop` even when they return tool calls. */
function finishReason(reason: string | undefined, hasCalls: boolean): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call' || hasCalls) return 'tool_calls';
  return 'stop';
}
