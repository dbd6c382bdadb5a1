import type { ModelMessage } from '../providers/index.js';

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
