import type { Runtime, Session } from '../runtime/index.js';
import type { ChatStreamPlan } from './chat-route.js';

/** The id of the assistant message that answers user message `messageId` (the `start` chunk's). */
export function replyIdOf(messageId: string): string {
  return `${messageId}:reply`;
}

/** The session states in which a run waits for the page's answer: nothing streams, so there is nothing to resume. */
const waitingStates = new Set(['awaiting_approval', 'awaiting_tool_results']);

/**
 * What `GET …/chat/:chatId/stream` (`useChat({ resume: true })`) replays: the session's active run from its
 * start, from the event log then live, as one assistant message; undefined when no run streams (the route answers
 * 204). Pauses the run already got past are replayed as step boundaries: the cursor is taken before the status,
 * so a pause at or before it belongs to a run seen running afterwards.
 */
export async function planResume(runtime: Runtime, session: Session): Promise<ChatStreamPlan | undefined> {
  const answeredUpTo = runtime.eventCursor();
  const { runId, state } = session.status();
  if (runId === undefined || state === 'idle' || waitingStates.has(state)) return undefined;
  const run = (await session.runs()).find((record) => record.runId === runId);
  const first = run?.messageIds[0];
  return {
    from: 0,
    runId,
    messageId: replyIdOf(first ?? runId),
    start: { answeredUpTo },
  };
}
