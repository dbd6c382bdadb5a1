import { abortReason, systemClock, type Clock } from '../core/index.js';
import { inlineKinds, type InlineKind } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import {
  ProviderError,
  type ModelCallOptions,
  type ModelPart,
  type ModelProvider,
  type ModelRequest,
  type Usage,
} from './model-provider.js';

/** A tool call a script asks for; a missing `id` becomes `call-<callIndex>-<index>`. */
export interface ScriptedToolCall {
  readonly id?: string;
  readonly name: string;
  readonly args: unknown;
}

interface ReplyOptions {
  /**
   * Wait on the clock between streamed parts (reasoning words, text words, tool calls); 0 never waits.
   * @default 0
   */
  readonly tokenDelayMs?: number;
  /** Reasoning streamed word by word before the text. */
  readonly reasoning?: string;
  /** Overrides of the reported usage; by default input = request characters / 4, output = words streamed. */
  readonly usage?: Partial<Usage>;
}

/** A scripted answer: text streamed word by word, then tool calls, then usage and finish. */
export type ScriptedReply =
  | (ReplyOptions & { readonly text: string; readonly toolCalls?: readonly ScriptedToolCall[] })
  | (ReplyOptions & { readonly toolCalls: readonly ScriptedToolCall[]; readonly text?: string });

/** A scripted failure: optionally some text first (a stream cut in the middle), then a `ProviderError`. */
export interface ScriptedFailure {
  readonly error: {
    readonly status?: number;
    readonly code?: string;
    readonly message: string;
    readonly retryAfterMs?: number;
  };
  readonly afterText?: string;
  /**
   * Wait on the clock between the words of `afterText`.
   * @default 0
   */
  readonly tokenDelayMs?: number;
}

/** A scripted call that yields nothing until its signal aborts. */
export interface ScriptedHang {
  readonly hang: true;
}

/** What the scripted model does for one model call. */
export type ScriptEntry = ScriptedReply | ScriptedFailure | ScriptedHang;

/**
 * A snapshot of one request the scripted model received: the request (messages and tools copied at call time)
 * and the auth profile it was sent with. A script function receives the same snapshot.
 */
export interface ScriptedRequest extends ModelRequest {
  /** The auth profile's id; undefined when the provider has no auth profiles. */
  readonly profileId: string | undefined;
}

/** Options of `scriptedModel`. */
export interface ScriptedModelOptions {
  /**
   * The clock token delays wait on.
   * @default systemClock
   */
  readonly clock?: Clock;
  /**
   * Keep a snapshot of every request in `requests`; benchmarks turn it off.
   * @default true
   */
  readonly record?: boolean;
  /**
   * What its models take inline (content parts with `mode: 'inline'`).
   * @default ['image', 'audio', 'pdf']
   */
  readonly inline?: readonly InlineKind[];
}

/** A `ModelProvider` that plays a script, and records what it was asked. */
export interface ScriptedModel extends ModelProvider {
  /** Every request received, in call order (empty when `record` is off). */
  readonly requests: readonly ScriptedRequest[];
  /** How many model calls were made. */
  readonly calls: number;
}

/**
 * A script: one entry per call, in order, or a function of the request snapshot (with `profileId`, so a failover
 * test can answer per profile) and the 0-based call index.
 */
export type Script = readonly ScriptEntry[] | ((request: ScriptedRequest, callIndex: number) => ScriptEntry);

// Whitespace travels with the word after it; the second branch keeps trailing whitespace.
const tokenPattern = /\s*\S+|\s+/g;

function words(text: string | undefined): string[] {
  return text ? (text.match(tokenPattern) ?? []) : [];
}

function checkEntry(entry: unknown, where: string): ScriptEntry {
  const fail = (why: string): never => {
    throw new RuntimeError('invalid_input', `scriptedModel: ${where} ${why}`);
  };
  if (typeof entry !== 'object' || entry === null) return fail('is not an object');
  const fields = entry as Record<string, unknown>;
  const delay = fields['tokenDelayMs'];
  if (delay !== undefined && (typeof delay !== 'number' || !(delay >= 0) || !Number.isFinite(delay))) {
    fail('has a tokenDelayMs that is not a finite number >= 0');
  }
  if ('hang' in fields) return fields['hang'] === true ? (entry as ScriptEntry) : fail('has hang !== true');
  if ('error' in fields) {
    const error = fields['error'] as { message?: unknown } | null | undefined;
    return typeof error?.message === 'string' ? (entry as ScriptEntry) : fail('has an error without message');
  }
  if (typeof fields['text'] === 'string' || Array.isArray(fields['toolCalls'])) return entry as ScriptEntry;
  return fail('needs text, toolCalls, error or hang');
}

function estimateInputTokens(request: ModelRequest): number {
  let characters = request.system?.length ?? 0;
  for (const message of request.messages) characters += message.content.length;
  return Math.ceil(characters / 4);
}

/** The parts to stream before usage and finish, and how many of them count as output tokens. */
function replyParts(entry: ScriptedReply, callIndex: number): { parts: ModelPart[]; tokens: number } {
  const parts: ModelPart[] = [];
  for (const delta of words(entry.reasoning)) parts.push({ type: 'reasoning', delta });
  for (const delta of words(entry.text)) parts.push({ type: 'text', delta });
  const tokens = parts.length;
  entry.toolCalls?.forEach((call, index) => {
    const id = call.id ?? `call-${callIndex}-${index}`;
    parts.push({ type: 'tool_call', call: { id, name: call.name, args: call.args } });
  });
  return { parts, tokens };
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(abortReason(signal));
    else signal.addEventListener('abort', () => reject(abortReason(signal)), { once: true });
  });
}

async function* play(
  entry: ScriptEntry,
  callIndex: number,
  request: ModelRequest,
  signal: AbortSignal,
  clock: Clock,
): AsyncGenerator<ModelPart, void, undefined> {
  if ('hang' in entry) return await untilAborted(signal);
  const failure = 'error' in entry ? entry : undefined;
  const reply = 'error' in entry ? undefined : entry;
  const { parts, tokens } = reply ? replyParts(reply, callIndex) : { parts: [], tokens: 0 };
  if (failure) for (const delta of words(failure.afterText)) parts.push({ type: 'text', delta });
  const delay = entry.tokenDelayMs ?? 0;
  for (let index = 0; index < parts.length; index++) {
    // No timer at all when there is no delay: the benchmark streams thousands of runs a second.
    if (delay > 0 && index > 0) await clock.sleep(delay, signal);
    if (signal.aborted) throw abortReason(signal);
    yield parts[index] as ModelPart;
  }
  if (signal.aborted) throw abortReason(signal);
  if (failure) throw new ProviderError(failure.error.message, failure.error);
  const usage: Usage = {
    inputTokens: reply?.usage?.inputTokens ?? estimateInputTokens(request),
    outputTokens: reply?.usage?.outputTokens ?? tokens,
  };
  yield { type: 'usage', usage };
  if (signal.aborted) throw abortReason(signal);
  yield { type: 'finish', reason: reply?.toolCalls?.length ? 'tool_calls' : 'stop' };
}

/** A stream whose first read rejects with `error`, the way a failing provider's stream does. */
function failWith(error: unknown): AsyncIterable<ModelPart> {
  const reason = error instanceof Error ? error : new Error(String(error));
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(reason) }) };
}

function snapshotOf(request: ModelRequest, callOptions: ModelCallOptions): ScriptedRequest {
  // `system` and `thinking` stay present (possibly undefined), as tests matching `{ system: undefined }` expect.
  const snapshot = {
    model: request.model,
    profileId: callOptions.credential?.profileId,
    system: request.system,
    thinking: request.thinking,
    messages: request.messages.slice(),
    tools: request.tools.slice(),
  };
  return snapshot as ScriptedRequest;
}

function pick(script: Script, request: () => ScriptedRequest, callIndex: number): ScriptEntry {
  if (typeof script === 'function')
    return checkEntry(script(request(), callIndex), `entry for call ${callIndex}`);
  const entry = script[callIndex];
  if (entry === undefined) {
    throw new RuntimeError(
      'internal',
      `scriptedModel: no script entry for call ${callIndex} (the script has ${script.length})`,
    );
  }
  return checkEntry(entry, `entry ${callIndex}`);
}

/**
 * A `ModelProvider` that plays `script`: one entry per model call (read at call time, so a test may push
 * more), or a function of the request and the 0-based call index. Errors surface while iterating.
 */
export function scriptedModel(script: Script, options: ScriptedModelOptions = {}): ScriptedModel {
  if (typeof script !== 'function') script.forEach((entry, index) => checkEntry(entry, `entry ${index}`));
  const clock = options.clock ?? systemClock;
  const record = options.record ?? true;
  const requests: ScriptedRequest[] = [];
  let calls = 0;

  const stream = (request: ModelRequest, callOptions: ModelCallOptions): AsyncIterable<ModelPart> => {
    const callIndex = calls++;
    // Taken only when someone reads it: the benchmark streams thousands of runs a second without recording.
    let snapshot: ScriptedRequest | undefined;
    const snapshotNow = (): ScriptedRequest => (snapshot ??= snapshotOf(request, callOptions));
    if (record) requests.push(snapshotNow());
    try {
      return play(pick(script, snapshotNow, callIndex), callIndex, request, callOptions.signal, clock);
    } catch (error) {
      return failWith(error);
    }
  };

  return {
    stream,
    inlineCapabilities: [{ model: '*', accepts: options.inline ?? inlineKinds }],
    requests,
    get calls() {
      return calls;
    },
  };
}
