import type { ModelMessage } from '../providers/index.js';
import { RuntimeError, isRuntimeError, storableText } from '../core/index.js';
import { callModel, paceRequest } from './model-call.js';
import type { ModelTurn, RunText } from './model-turn.js';
import type { RunContext } from './run-context.js';

/** What a compactor gets: the conversation, a way to ask the model for a summary, and the run's signal. */
export interface CompactionInput {
  readonly messages: readonly ModelMessage[];
  /** Ask the run's model (no events, no tools) to answer `prompt`; resolves with its text. */
  readonly summarize: (prompt: string) => Promise<string>;
  readonly signal: AbortSignal;
}

/** Shrinks a conversation that no longer fits the model's context. Pluggable via `createRuntime({ compactor })`. */
export type Compactor = (input: CompactionInput) => Promise<ModelMessage[]>;

/** Messages at the end of the conversation that compaction always keeps as they are. */
const keepRecent = 4;
/** A tool result longer than this is cut to `truncatedLength` by the last-resort truncation. */
const oversizedToolResult = 8000;
const truncatedLength = 2000;

/** Where the older part ends: at least `keepRecent` back, moved back to a user message (never between a call and its result). */
function cutPoint(messages: readonly ModelMessage[]): number {
  let cut = messages.length - keepRecent;
  while (cut > 0 && messages[cut]?.role !== 'user') cut--;
  return cut;
}

function transcriptOf(messages: readonly ModelMessage[]): string {
  return messages
    .map((message) => {
      if (message.role === 'tool') return `tool ${message.tool} result: ${message.content}`;
      const calls =
        message.role === 'assistant' && message.toolCalls !== undefined
          ? ` (called ${message.toolCalls.map((call) => call.name).join(', ')})`
          : '';
      return `${message.role}${calls}: ${message.content}`;
    })
    .join('\n');
}

/**
 * The default compactor: the model summarises everything before the most recent turns into one message; the
 * recent turns stay as they are. Returns the conversation unchanged when there is nothing older to summarise.
 */
export const summarizeOlderTurns: Compactor = async ({ messages, summarize }) => {
  const cut = cutPoint(messages);
  if (cut <= 0) return [...messages];
  const summary = await summarize(
    'Summarise this conversation between a user and an assistant so the assistant can continue it. Keep facts, ' +
      'decisions, names, numbers and open questions; drop small talk.\n\n' +
      transcriptOf(messages.slice(0, cut)),
  );
  return [
    { role: 'user', content: `Summary of the earlier conversation:\n${summary}` },
    ...messages.slice(cut),
  ];
};

/** The last resort before failing: cut every oversized tool result. Returns undefined when none was oversized. */
export function truncateToolResults(messages: readonly ModelMessage[]): ModelMessage[] | undefined {
  let changed = false;
  const truncated = messages.map((message) => {
    if (message.role !== 'tool' || message.content.length <= oversizedToolResult) return message;
    changed = true;
    const dropped = message.content.length - truncatedLength;
    return {
      ...message,
      content: `${message.content.slice(0, truncatedLength)}\n[… ${dropped} characters truncated]`,
    };
  });
  return changed ? truncated : undefined;
}

/** Compactions a run may do before it falls back to truncating tool results. */
export const maxCompactions = 3;

/** What a run has spent of its compaction budget. */
export interface CompactionBudget {
  compactions: number;
  truncated: boolean;
}

/** Ask the primary model for plain text: no tools, no events (a summary is not part of the answer). */
async function summarize(context: RunContext, prompt: string): Promise<string> {
  const { signal } = context;
  const { profiles, clock } = context.services;
  const candidate = context.services.candidates[0];
  const pooled = profiles.has(candidate.providerName);
  const profile = pooled
    ? profiles.next(candidate.providerName, candidate.model, new Set(), clock.now())
    : undefined;
  // A provider with auth profiles is never called without one's credential.
  if (pooled && profile === undefined) {
    const { soonest, missing } = profiles.availability(candidate.providerName, candidate.model, clock.now());
    if (soonest === undefined && missing.length > 0)
      throw new RuntimeError('provider_auth', missing.join('; '));
    throw new RuntimeError(
      'provider_rate_limit',
      `no auth profile of ${candidate.providerName} is available for the summary`,
    );
  }
  const options = profile === undefined ? { signal } : { signal, credential: profile.credential() };
  let text = '';
  const request = {
    model: candidate.model,
    messages: [{ role: 'user' as const, content: prompt }],
    tools: [],
  };
  const paced = paceRequest(context, candidate.providerName);
  if (paced !== undefined) await paced;
  for await (const part of candidate.provider.stream(request, options)) {
    if (part.type === 'text') text += storableText(part.delta);
  }
  return text;
}

/** How much text a conversation sends: what compaction has to reduce. */
function sizeOf(messages: readonly ModelMessage[]): number {
  let size = 0;
  for (const message of messages) {
    size += message.content.length;
    if (message.role === 'assistant' && message.toolCalls !== undefined)
      size += JSON.stringify(message.toolCalls).length;
  }
  return size;
}

/** The next, smaller conversation: compacted while the budget lasts, then oversized tool results cut once. */
async function shrink(
  context: RunContext,
  messages: readonly ModelMessage[],
  budget: CompactionBudget,
): Promise<{ messages: ModelMessage[]; truncated: boolean } | undefined> {
  while (budget.compactions < maxCompactions) {
    budget.compactions++;
    context.emit({
      type: 'compaction.started',
      runId: context.runId,
      attempt: budget.compactions,
      messages: messages.length,
    });
    const compacted = await context.services.compactor({
      messages,
      summarize: (prompt) => summarize(context, prompt),
      signal: context.signal,
    });
    if (sizeOf(compacted) < sizeOf(messages)) return { messages: compacted, truncated: false };
    context.emit({
      type: 'compaction.ended',
      runId: context.runId,
      attempt: budget.compactions,
      before: messages.length,
      after: compacted.length,
      truncated: false,
    });
  }
  if (budget.truncated) return undefined;
  budget.truncated = true;
  const truncated = truncateToolResults(messages);
  if (truncated === undefined) return undefined;
  context.emit({
    type: 'compaction.started',
    runId: context.runId,
    attempt: budget.compactions,
    messages: messages.length,
  });
  return { messages: truncated, truncated: true };
}

/**
 * A model call that survives a context overflow (docs/failover.md): compact the conversation (up to 3 times per run,
 * with the pluggable compactor), then truncate oversized tool results once, then fail with `context_overflow`.
 * The run is `compacting` meanwhile, so steer messages fall back to followups. `messages` is replaced in place.
 */
export async function callWithCompaction(
  context: RunContext,
  messages: ModelMessage[],
  runText: RunText,
  budget: CompactionBudget,
): Promise<ModelTurn> {
  for (;;) {
    try {
      return await callModel(context, messages, runText);
    } catch (error) {
      if (!isRuntimeError(error, 'context_overflow') || context.signal.aborted) throw error;
      context.setPhase('compacting');
      const before = messages.length;
      const smaller = await shrink(context, messages, budget);
      if (smaller === undefined) throw error;
      messages.splice(0, messages.length, ...smaller.messages);
      context.emit({
        type: 'compaction.ended',
        runId: context.runId,
        attempt: budget.compactions,
        before,
        after: messages.length,
        truncated: smaller.truncated,
      });
      context.setPhase('streaming');
    }
  }
}
