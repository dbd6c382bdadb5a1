import type { TurnRecord } from '../ledger/index.js';
import type { ModelMessage } from '../providers/index.js';

const noPending: ReadonlySet<string> = new Set();

/** A turn that neither asks for tools nor answers one. */
function withoutTools(turn: TurnRecord): boolean {
  return turn.role === 'user' || (turn.role === 'assistant' && (turn.toolCalls?.length ?? 0) === 0);
}

/** The model message of a user turn or of an assistant turn without tool calls. */
function plainMessage(turn: TurnRecord): ModelMessage {
  if (turn.role === 'assistant') return { role: 'assistant', content: turn.content };
  return turn.attachments === undefined
    ? { role: 'user', content: turn.content }
    : { role: 'user', content: turn.content, attachments: turn.attachments };
}

/**
 * Turn a session's recorded turns into the model messages of the next run: at most `limit` of the latest,
 * starting at a user turn, and without assistant tool calls whose results were never recorded (a run that
 * was aborted mid-batch) or tool results whose call is missing.
 */
export function turnsToMessages(
  turns: readonly TurnRecord[],
  limit: number,
  /** Calls whose results are not among the turns but will follow (a paused batch being resumed). */
  pending: ReadonlySet<string> = noPending,
): ModelMessage[] {
  let start = Math.max(0, turns.length - limit);
  while (start < turns.length && turns[start]?.role !== 'user') start++;
  const recent = turns.slice(start);
  // No tool calls among them (the common case): every turn goes as it is, nothing to pair.
  if (pending.size === 0 && recent.every(withoutTools)) return recent.map(plainMessage);
  const answered = new Set<string | undefined>(pending);
  for (const turn of recent) if (turn.role === 'tool') answered.add(turn.toolCallId);
  const called = new Set<string>();
  const messages: ModelMessage[] = [];
  for (const turn of recent) {
    switch (turn.role) {
      case 'user':
        messages.push(
          turn.attachments === undefined
            ? { role: 'user', content: turn.content }
            : { role: 'user', content: turn.content, attachments: turn.attachments },
        );
        break;
      case 'assistant': {
        const toolCalls = (turn.toolCalls ?? []).filter((call) => answered.has(call.id));
        for (const call of toolCalls) called.add(call.id);
        messages.push(
          toolCalls.length > 0
            ? { role: 'assistant', content: turn.content, toolCalls }
            : { role: 'assistant', content: turn.content },
        );
        break;
      }
      case 'tool':
        if (turn.toolCallId === undefined || !called.has(turn.toolCallId)) break;
        messages.push({
          role: 'tool',
          toolCallId: turn.toolCallId,
          tool: turn.tool ?? '',
          content: turn.content,
          ...(turn.isError === true ? { isError: true } : {}),
        });
        break;
    }
  }
  return messages;
}
