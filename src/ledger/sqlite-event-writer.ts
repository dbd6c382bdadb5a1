import type Database from 'better-sqlite3';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { createDeltaCoalescer, coalesceMs, type CoalescedBatch } from './delta-coalescer.js';
import { eventRow } from './sqlite-params.js';

/** The write path of the SQLite event log: cursors checked, token deltas coalesced, rows group-committed. */
export interface SqliteEventWriter {
  /** Append stamped events; resolves once every row they went into (a buffered delta's too) is durable. */
  append(events: readonly RuntimeEvent[]): Promise<void>;
  /** Write the buffered deltas now (reads call it first so they see them; close awaits it). */
  flush(): Promise<void>;
  /** The highest cursor appended so far (or found in the file when it was opened). */
  lastAppended(): number;
  /** Stop the drain timer (close). */
  stop(): void;
}

/** What the event writer needs of the connection. */
export interface SqliteEventWriterDeps {
  readonly db: Database.Database;
  readonly write: (work: () => void) => Promise<void>;
  /** Why a write is refused now (closed, read-only), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

/** Create the event writer of one connection. */
export function createSqliteEventWriter({ db, write, refusal }: SqliteEventWriterDeps): SqliteEventWriter {
  const insert = db.prepare(
    `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
     VALUES (@cursor, @session_key, @seq, @type, @run_id, @at, @body)`,
  );
  const deltas = createDeltaCoalescer();
  const highest = db.prepare('SELECT max(cursor) AS cursor FROM events').get() as { cursor: number | null };
  let lastAppended = highest.cursor ?? 0;
  let drainTimer: NodeJS.Timeout | undefined;

  /** Write a batch; the deltas buffered in it are durable when the write is. */
  const writeBatch = (batch: CoalescedBatch): Promise<void> => {
    const written =
      batch.write.length === 0
        ? Promise.resolve()
        : write(() => batch.write.forEach((event) => insert.run(eventRow(event))));
    for (const buffer of batch.flushed) {
      written.then(
        () => buffer.resolve(),
        (error: unknown) => buffer.reject(error),
      );
    }
    return written;
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
      let previous = lastAppended;
      for (const event of events) {
        if (!(event.cursor > previous)) {
          return Promise.reject(
            new RuntimeError('invalid_input', `event cursor ${event.cursor} is not above ${previous}`),
          );
        }
        previous = event.cursor;
      }
      lastAppended = previous;
      const batch = deltas.take(events);
      const now = writeBatch(batch);
      armDrain();
      // A buffered delta is durable only once the row it was coalesced into is.
      return batch.waits.length === 0 ? now : Promise.all([now, ...batch.waits]).then(() => undefined);
    },
    flush: () => writeBatch(deltas.drain()),
    lastAppended: () => lastAppended,
    stop: () => {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      drainTimer = undefined;
    },
  };
}
