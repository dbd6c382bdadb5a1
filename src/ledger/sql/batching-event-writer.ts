import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import { coalesceMs, type CoalescedBatch, type DeltaCoalescer } from './delta-coalescer.js';

/** The write path of an event log: cursors checked, token deltas coalesced, rows group-committed. */
export interface EventWriter {
  /** Append stamped events; resolves once every row they went into (a buffered delta's too) is durable. */
  append(events: readonly RuntimeEvent[]): Promise<void>;
  /** Write the buffered deltas now (reads of the log call it first so they see them; close awaits it). */
  flush(): Promise<void>;
  /** The highest cursor appended so far (or found in the store when it was opened). */
  lastAppended(): number;
  /** Raise `lastAppended` to the highest cursor found at open. */
  seed(cursor: number): void;
  /** Stop the drain timer (close). */
  stop(): void;
}

/** What a ledger gives the event writer: its coalescer, how it writes rows, and whether writes are refused now. */
export interface EventWriterDeps {
  readonly deltas: DeltaCoalescer;
  /** Write these rows in the ledger's next group commit; resolves once they are durable. */
  readonly writeRows: (events: readonly RuntimeEvent[]) => Promise<void>;
  /** Why a write is refused now (closed, read-only), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

/** The last cursor of `events`, each above the one before it (and the first above `previous`), or the refusal. */
function lastCursorOf(events: readonly RuntimeEvent[], previous: number): number | RuntimeError {
  for (const event of events) {
    if (!(event.cursor > previous)) {
      return new RuntimeError('invalid_input', `event cursor ${event.cursor} is not above ${previous}`);
    }
    previous = event.cursor;
  }
  return previous;
}

/**
 * What an append resolves with: the rows written now and the buffers its deltas went into. A buffered delta is
 * durable only once the row it was coalesced into is. When every event went into a buffer, `now` holds only other
 * events' rows (buffers it flushed, each settling its own appenders): its failure says nothing of these deltas,
 * whose row stays buffered and may still be written. Rejecting them with it would report unrecorded (so never
 * delivered live) a delta that the log then holds.
 */
function settledAppend(
  events: readonly RuntimeEvent[],
  batch: CoalescedBatch,
  now: Promise<void>,
): Promise<void> {
  if (batch.waits.length === 0) return now;
  const allBuffered = events.every((event) => event.type === 'assistant.delta' && event.runId !== undefined);
  if (allBuffered) {
    now.catch(() => undefined);
    return Promise.all(batch.waits).then(() => undefined);
  }
  return Promise.all([now, ...batch.waits]).then(() => undefined);
}

/** The event writer shared by the SQLite and Postgres ledgers; they differ only in how rows are written. */
export function createEventWriter({ deltas, writeRows, refusal }: EventWriterDeps): EventWriter {
  let lastAppended = 0;
  let drainTimer: NodeJS.Timeout | undefined;

  /** Write a batch; the deltas buffered in it are durable when the write is. */
  const writeBatch = (batch: CoalescedBatch): Promise<void> => {
    const written = batch.write.length === 0 ? Promise.resolve() : writeRows(batch.write);
    for (const buffer of batch.flushed) {
      written.then(
        () => buffer.resolve(),
        (error: unknown) => buffer.reject(error),
      );
    }
    return written;
  };
  /**
   * Write an append's batch. A `run.ended` (the bus appends each event alone) may be refused with its run's close
   * (`RefusedCloses`): the buffered deltas it flushes (another run's, on Postgres: they come before it) are written
   * first on their own, so they never fail with it.
   */
  const writeAppended = (events: readonly RuntimeEvent[], batch: CoalescedBatch): Promise<void> => {
    const [ended] = events;
    if (batch.flushed.length === 0 || events.length !== 1 || ended?.type !== 'run.ended')
      return writeBatch(batch);
    const flushed = batch.write.filter((event) => event !== ended);
    writeBatch({ write: flushed, flushed: batch.flushed, waits: [] }).catch(() => undefined);
    return writeRows([ended]);
  };
  const armDrain = (): void => {
    drainTimer ??= setTimeout(() => {
      drainTimer = undefined;
      if (refusal() === undefined) void writeBatch(deltas.drain()).catch(() => undefined);
    }, coalesceMs);
    drainTimer.unref();
  };

  return {
    append(events) {
      const refused = refusal();
      if (refused !== undefined) return Promise.reject(refused);
      const checked = lastCursorOf(events, lastAppended);
      if (checked instanceof RuntimeError) return Promise.reject(checked);
      lastAppended = checked;
      const batch = deltas.take(events);
      const now = writeAppended(events, batch);
      armDrain();
      return settledAppend(events, batch, now);
    },
    flush: () => writeBatch(deltas.drain()),
    lastAppended: () => lastAppended,
    seed: (cursor) => {
      lastAppended = Math.max(lastAppended, cursor);
    },
    stop: () => {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      drainTimer = undefined;
    },
  };
}
