import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { PostgresAccess } from './postgres-access.js';
import type { PostgresEventWriter } from './postgres-event-writer.js';
import { insertEvents } from './postgres-event-writer.js';
import type { PostgresQuery } from './postgres-queue.js';

/** Who may write a session: the epoch its owner claimed. */
export interface SessionFence {
  readonly sessionKey: string;
  readonly epoch: number;
}

// FOR SHARE holds the session row until this transaction ends: a claim (an UPDATE of the row) waits for it, so no
// write can pass the check and then commit after a newer owner's claim did.
const holdSql = 'SELECT 1 FROM sessions WHERE session_key = $1 AND epoch = $2 FOR SHARE';
const claimSql = `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at)
    VALUES ($1, '{}', NULL, 1, 0, $2)
  ON CONFLICT (session_key) DO UPDATE SET epoch = sessions.epoch + 1, updated_at = excluded.updated_at
  RETURNING epoch`;

/** Check the fence in the transaction of the write that follows; `fenced` once the epoch moved on. */
async function holdFence(query: PostgresQuery, fence: SessionFence): Promise<void> {
  const { rowCount } = await query(holdSql, [fence.sessionKey, fence.epoch]);
  if (rowCount === 0) {
    throw new RuntimeError(
      'fenced',
      `session "${fence.sessionKey}" is no longer owned under epoch ${fence.epoch}: another worker claimed it`,
      { details: { sessionKey: fence.sessionKey, epoch: fence.epoch } },
    );
  }
}

/** Bump a session's epoch (its record created when missing); resolves the new epoch. */
export function claimSession(access: PostgresAccess, sessionKey: string, at: number): Promise<number> {
  return access.write(async (query) => {
    const { rows } = await query<{ epoch: number }>(claimSql, [sessionKey, at]);
    return rows[0]?.epoch ?? 0;
  });
}

/**
 * The fences the open transaction already checked (and holds: FOR SHARE lasts until it ends), keyed by the
 * transaction's query function, which the queue replaces after any rollback (see `PostgresQuery`).
 */
const heldInTransaction = new WeakMap<PostgresQuery, Set<string>>();

/** The access of a fence's owner: every write runs after the fence check, once per transaction and session. */
export function fencedAccess(access: PostgresAccess, fence: SessionFence): PostgresAccess {
  const id = `${fence.epoch}\u0000${fence.sessionKey}`;
  return {
    ...access,
    write: (work) =>
      access.write(async (query) => {
        let held = heldInTransaction.get(query);
        if (held?.has(id) !== true) {
          await holdFence(query, fence);
          if (held === undefined) heldInTransaction.set(query, (held = new Set()));
          held.add(id);
        }
        return work(query);
      }),
  };
}

/**
 * Event appends of a fence's owner: written at once through the fenced access, never buffered (a buffered delta
 * would be written later by the ledger's drain timer, outside the fence), and numbered in the transaction that
 * writes them, after the log's end (the events' cursors are replaced in place). So the owners of different
 * sessions, each in its own process, append to one log whose cursor order is its commit order, and an event goes
 * in the same transaction as the writes queued beside it (a run's closed row and its `run.ended`).
 */
export function fencedEvents(
  writer: PostgresEventWriter,
  access: PostgresAccess,
): Pick<PostgresEventWriter, 'append' | 'lastAppended'> {
  return {
    append: (events: readonly RuntimeEvent[]) =>
      events.length === 0
        ? Promise.resolve()
        : access.write(async (query) => {
            await insertEvents(query, events, 'renumber');
            writer.seed(events.at(-1)?.cursor ?? 0);
          }),
    lastAppended: () => writer.lastAppended(),
  };
}
