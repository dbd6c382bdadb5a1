import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { coalesceMs, type CoalescedBatch } from './delta-coalescer.js';
import { createOrderedDeltaCoalescer } from './postgres-deltas.js';
import type { PostgresQuery, PostgresWork } from './postgres-queue.js';
import { eventRow } from './sqlite-params.js';

/** The write path of the Postgres event log: cursors checked, token deltas coalesced, rows group-committed. */
export interface PostgresEventWriter {
  /** Append stamped events; resolves once every row they went into (a buffered delta's too) is durable. */
  append(events: readonly RuntimeEvent[]): Promise<void>;
  /** Write the buffered deltas now (reads of the log call it first so they see them; close awaits it). */
  flush(): Promise<void>;
  /** The highest cursor appended so far (or found in the database when it was opened). */
  lastAppended(): number;
  /** Raise `lastAppended` to the highest cursor found at open. */
  seed(cursor: number): void;
  /** Stop the drain timer (close). */
  stop(): void;
}

/** What the event writer needs of the connection. */
export interface PostgresEventWriterDeps {
  readonly write: <T>(work: PostgresWork<T>) => Promise<T>;
  /** Why a write is refused now (closed), if it is. */
  readonly refusal: () => RuntimeError | undefined;
}

// Event-writing transactions take turns (a transaction lock, held until COMMIT), and each checks that its first
// cursor is above every cursor committed (or pruned): so the log's cursor order is its commit order across every
// process on the schema, and a reader never sees a cursor appear below one it already saw.
const turnSql = "SELECT pg_advisory_xact_lock(hashtext('agentlanes:events:' || current_schema()))";
const highestSql = `SELECT GREATEST(coalesce((SELECT max(cursor) FROM events), 0),
    coalesce((SELECT value::bigint FROM meta WHERE key = 'last_cursor'), 0)) AS cursor`;

/** Insert event rows in one statement (one array parameter per column), in cursor order after the log's end. */
export async function insertEvents(query: PostgresQuery, events: readonly RuntimeEvent[]): Promise<void> {
  const rows = events.map(eventRow);
  await query(turnSql);
  const highest = (await query<{ cursor: number }>(highestSql)).rows[0]?.cursor ?? 0;
  const first = rows[0]?.cursor ?? 0;
  if (!(first > highest)) {
    throw new RuntimeError('invalid_input', `event cursor ${first} is not above ${highest}, the log's last`);
  }
  await query(
    `INSERT INTO events (cursor, session_key, seq, type, run_id, at, body)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[], $7::text[])`,
    [
      rows.map((row) => row.cursor),
      rows.map((row) => row.session_key),
      rows.map((row) => row.seq),
      rows.map((row) => row.type),
      rows.map((row) => row.run_id),
      rows.map((row) => row.at),
      rows.map((row) => row.body),
    ],
  );
}

/** Create the event writer of one connection (deltas coalesced in cursor order: see postgres-deltas.ts). */
export function createPostgresEventWriter({ write, refusal }: PostgresEventWriterDeps): PostgresEventWriter {
  const deltas = createOrderedDeltaCoalescer();
  let lastAppended = 0;
  let drainTimer: NodeJS.Timeout | undefined;

  /** Write a batch; the deltas buffered in it are durable when the write is. */
  const writeBatch = (batch: CoalescedBatch): Promise<void> => {
    const written =
      batch.write.length === 0 ? Promise.resolve() : write((query) => insertEvents(query, batch.write));
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
    seed: (cursor) => {
      lastAppended = Math.max(lastAppended, cursor);
    },
    stop: () => {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      drainTimer = undefined;
    },
  };
}
