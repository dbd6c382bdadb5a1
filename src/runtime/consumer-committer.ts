import { RuntimeError, isRuntimeError } from '../core/errors.js';
import type { CheckedStreamOptions } from './event-stream-options.js';
import type { EventSource } from './event-stream.js';

/** Stores a consumer's position as the stream passes events. */
export interface Committer {
  /** Undefined when there is nothing to store (no consumer name): the stream need not wait. */
  commit(cursor: number): Promise<void> | undefined;
  /** Resolves once every position asked for is stored (or its write failed). */
  settled(): Promise<void>;
}

/** The error a position refused by a closed ledger becomes: the loop learns its last event was not recorded. */
function refusedAfterClose(consumer: string, cursor: number, cause: unknown): RuntimeError {
  return new RuntimeError(
    'runtime_closed',
    `events: the runtime closed before consumer "${consumer}" stored its position at cursor ${cursor}; ` +
      'that event is delivered again when the consumer next starts',
    { cause, details: { consumer, cursor } },
  );
}

/**
 * Store a consumer's position; writes are chained so they land in order. The stream awaits each one before it
 * yields the next event, so a crash re-delivers at most the event that was being handled. A position the ledger
 * refuses because the runtime closed rejects with `runtime_closed` naming it (the loop sees it: never lost
 * silently); any other failure goes to `onError`.
 */
export function createCommitter(
  source: EventSource,
  options: CheckedStreamOptions,
  lost: () => boolean,
): Committer {
  let chain: Promise<void> = Promise.resolve();
  const { consumer, sessionKey } = options;
  return {
    /** Undefined when there is nothing to store (no consumer name, or another worker reads it now). */
    commit(cursor: number): Promise<void> | undefined {
      if (consumer === undefined || lost()) return undefined;
      const position = {
        consumer,
        ...(sessionKey === undefined ? {} : { sessionKey }),
        cursor,
        updatedAt: source.clock.now(),
      };
      const stored = chain.then(() => source.ledger.putConsumer(position));
      chain = stored.catch(() => undefined);
      return stored.catch((error: unknown) => {
        if (isRuntimeError(error, 'runtime_closed')) throw refusedAfterClose(consumer, cursor, error);
        source.onError(error);
      });
    },
    settled: () => chain,
  };
}
