import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import { eventTypes, type EventType } from '../core/index.js';

/** Where an event stream starts, what it holds and when it stops. */
export interface EventStreamOptions {
  /**
   * Replay events with a cursor above this one; `'now'` starts at the end of the log (only what happens next).
   * With `consumer`, it applies only while that consumer has no stored position yet. @default 0 (everything)
   */
  readonly after?: number | 'now';
  /**
   * A durable consumer name: the stream resumes after the last event this consumer processed (stored in the
   * ledger, per session for `session.events()`). An event counts as processed once the next one is asked for or
   * the loop is left (`break`, `return`, a throw), so a crash re-delivers at most the event being handled.
   * One iterator per name (and session) at a time in a runtime.
   */
  readonly consumer?: string;
  /** Only events of these types. @default every type */
  readonly types?: readonly EventType[];
  /** Stops the stream. */
  readonly signal?: AbortSignal;
}

/** The options as checked, with the session a `session.events()` stream belongs to. */
export interface CheckedStreamOptions extends EventStreamOptions {
  readonly sessionKey?: string;
}

/** The longest consumer name accepted. */
export const consumerNameLimit = 200;

// eslint-disable-next-line no-control-regex
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;

const streamOptionsSchema = z
  .object({
    after: z.union([z.int().min(0), z.literal('now')]).optional(),
    consumer: z
      .string()
      .min(1, 'a consumer name is not empty')
      .max(consumerNameLimit, `a consumer name has at most ${consumerNameLimit} characters`)
      .refine((name) => !controlCharacters.test(name), 'a consumer name has no control characters')
      .optional(),
    types: z.array(z.enum(eventTypes as [EventType, ...EventType[]])).optional(),
    signal: z.instanceof(AbortSignal).optional(),
    sessionKey: z.string().optional(),
  })
  .strict();

/** Check stream options at the boundary: `invalid_input` for anything the schema refuses. */
export function checkStreamOptions(options: unknown): CheckedStreamOptions {
  const checked = streamOptionsSchema.safeParse(options);
  if (!checked.success) {
    throw new RuntimeError('invalid_input', `events: ${z.prettifyError(checked.error)}`, {
      cause: checked.error,
    });
  }
  // The signal is kept as passed (zod would hand back the same instance, but say so plainly).
  return checked.data as CheckedStreamOptions;
}
