import type { ErrorInfo } from '../core/index.js';
import type { EventInput } from '../core/index.js';

/** `error` with its message passed through `scrub`; the same object when nothing changed. */
export function scrubErrorInfo(error: ErrorInfo, scrub: (text: string) => string): ErrorInfo {
  const message = scrub(error.message);
  return message === error.message ? error : { ...error, message };
}

/**
 * The event with the message of its `error` (tool.failed, undo.failed, step.executed, run.ended) scrubbed of
 * secrets: a tool or provider that echoes a key must not put it in the event log.
 */
export function scrubEventError(event: EventInput, scrub: (text: string) => string): EventInput {
  if (!('error' in event) || event.error === undefined) return event;
  const error = scrubErrorInfo(event.error, scrub);
  return error === event.error ? event : { ...event, error };
}

/** A tool turn that reports an error, its content scrubbed of secrets before the ledger records it. */
export function scrubErrorTurn<T extends { readonly content: string; readonly isError?: boolean }>(
  turn: T,
  scrub: (text: string) => string,
): T {
  return turn.isError === true ? { ...turn, content: scrub(turn.content) } : turn;
}
