/**
 * The AI SDK's stream parts (spec v2 and v3) folded into our model parts. Parts are checked as they come: a part of
 * the wrong shape is a `malformed_response`, never a TypeError from deep inside the fold.
 */
import {
  ProviderError,
  type FinishReason,
  type ModelPart,
  type ToolCall,
  type Usage,
} from '../model-provider.js';

/** Folds one call's stream parts; `fold` returns what to yield, `end` what closes a stream that finished. */
export interface PartFolder {
  fold(part: unknown): ModelPart[];
  /** The usage and finish, once the stream is over; throws if the model never finished. */
  end(): ModelPart[];
  /** The error part the model streamed, if any: thrown by the caller after mapping. */
  readonly streamedError: { readonly error: unknown } | undefined;
}

interface FoldState {
  /** Tool inputs streamed as `tool-input-*` that no `tool-call` part has completed yet, by id. */
  readonly inputs: Map<string, { name: string; text: string }>;
  hasCalls: boolean;
  usage: Usage | undefined;
  finish: FinishReason | undefined;
  streamedError: { readonly error: unknown } | undefined;
}

function malformed(what: string): ProviderError {
  return new ProviderError(`malformed response: ${what}`, { status: 502, code: 'malformed_response' });
}

function stringField(part: Record<string, unknown>, name: string): string {
  const value = part[name];
  if (typeof value !== 'string') throw malformed(`a ${String(part['type'])} part without a string ${name}`);
  return value;
}

/** Create the folder of one call's stream. */
export function createPartFolder(): PartFolder {
  const state: FoldState = {
    inputs: new Map(),
    hasCalls: false,
    usage: undefined,
    finish: undefined,
    streamedError: undefined,
  };
  return {
    fold: (part) => foldPart(state, part),
    end: () => endParts(state),
    get streamedError() {
      return state.streamedError;
    },
  };
}

function foldPart(state: FoldState, raw: unknown): ModelPart[] {
  if (typeof raw !== 'object' || raw === null) throw malformed('a stream part that is not an object');
  const part = raw as Record<string, unknown>;
  switch (part['type']) {
    case 'text-delta':
      return deltaPart('text', stringField(part, 'delta'));
    case 'reasoning-delta':
      return deltaPart('reasoning', stringField(part, 'delta'));
    case 'tool-input-start':
      state.inputs.set(stringField(part, 'id'), { name: stringField(part, 'toolName'), text: '' });
      return [];
    case 'tool-input-delta': {
      const input = state.inputs.get(stringField(part, 'id'));
      if (input !== undefined) input.text += stringField(part, 'delta');
      return [];
    }
    case 'tool-call':
      return toolCallPart(state, part);
    case 'finish':
      state.usage = usageOf(part['usage']);
      state.finish = finishOf(part['finishReason'], state);
      return [];
    case 'error':
      state.streamedError = { error: part['error'] };
      return [];
    default:
      // stream-start, response-metadata, *-start/*-end, sources, files, raw chunks: nothing to report.
      return [];
  }
}

function deltaPart(type: 'text' | 'reasoning', delta: string): ModelPart[] {
  return delta.length === 0 ? [] : [{ type, delta }];
}

function toolCallPart(state: FoldState, part: Record<string, unknown>): ModelPart[] {
  const id = stringField(part, 'toolCallId');
  state.inputs.delete(id);
  // A tool the vendor ran itself (web search…): its result is already in the answer, nothing for us to run.
  if (part['providerExecuted'] === true) return [];
  const input = part['input'];
  const name = stringField(part, 'toolName');
  const args = typeof input === 'string' ? parseArgs(input, name) : (input ?? {});
  state.hasCalls = true;
  return [{ type: 'tool_call', call: { id, name, args } satisfies ToolCall }];
}

function parseArgs(text: string, name: string): unknown {
  // A tool without parameters may stream no input at all.
  if (text.trim().length === 0) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw malformed(`tool call arguments for ${name} are not JSON`);
  }
}

/** Usage of spec v3 (`{ inputTokens: { total } }`) or v2 (`{ inputTokens: number }`); unknown counts are 0. */
function usageOf(raw: unknown): Usage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const usage = raw as Record<string, unknown>;
  const count = (value: unknown): number | undefined => {
    const total = typeof value === 'object' && value !== null ? (value as { total?: unknown }).total : value;
    return typeof total === 'number' && Number.isFinite(total) ? total : undefined;
  };
  const inputTokens = count(usage['inputTokens']);
  const outputTokens = count(usage['outputTokens']);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 };
}

/** Finish reason of spec v3 (`{ unified }`) or v2 (a string). Tool calls win over `stop`, as compatible servers say `stop`. */
function finishOf(raw: unknown, state: FoldState): FinishReason {
  const reason = typeof raw === 'object' && raw !== null ? (raw as { unified?: unknown }).unified : raw;
  if (reason === 'length') return 'length';
  if (reason === 'tool-calls' || state.hasCalls || state.inputs.size > 0) return 'tool_calls';
  return 'stop';
}

function endParts(state: FoldState): ModelPart[] {
  if (state.finish === undefined) {
    throw new ProviderError('stream interrupted: the response ended before the model finished', {
      code: 'ECONNRESET',
    });
  }
  // Inputs streamed without a closing `tool-call` part (a provider that sends only the deltas).
  const calls: ModelPart[] = [...state.inputs].map(([id, input]) => ({
    type: 'tool_call',
    call: { id, name: input.name, args: parseArgs(input.text, input.name) },
  }));
  state.inputs.clear();
  const usage: ModelPart[] = state.usage === undefined ? [] : [{ type: 'usage', usage: state.usage }];
  return [...calls, ...usage, { type: 'finish', reason: state.finish }];
}
