import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import type { PostgresAccess } from './access.js';
import type { PostgresEventWriter } from './event-writer.js';
import { insertEvents } from './event-writer.js';
import { checkBeforeCommit, type PostgresQuery } from './queue.js';

/** Who may write a session: the epoch its owner claimed, and the lease it claimed it under (on a cluster). */
export interface SessionFence {
  readonly sessionKey: string;
  readonly epoch: number;
  /** The lease no transaction writing the session may outlive; none: the epoch alone fences. */
  readonly lease?: FenceLease | undefined;
}

/**
 * A lease measured on the database's clock (a cluster worker's, see src/cluster/worker-lease.ts). A transaction
 * that writes the fenced session learns at its first write how long the lease still runs and may not run longer
 * (its statement, lock and idle-in-transaction timeouts are cut to it), and checks the lease again last, in its
 * COMMIT's own message: so it never commits after the lease ended, and never holds the session's row (which a new
 * owner's claim must lock) for longer than the lease.
 */
export interface FenceLease {
  /** Who holds the lease: `$3` of `remainingMs`. */
  readonly holder: string;
  /** A scalar SQL expression: the milliseconds the lease of `$3` still runs (NULL or ≤ 0 once it ended). */
  readonly remainingMs: string;
  /** A statement (its values inlined) that raises once the lease ended, run last before COMMIT. */
  readonly commitCheck: string;
}

// FOR SHARE holds the session row until this transaction ends: a claim (an UPDATE of the row) waits for it, so no
// write can pass the check and then commit after a newer owner's claim did.
const holdSql = 'SELECT 1 FROM sessions WHERE session_key = $1 AND epoch = $2 FOR SHARE';
const claimSql = `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at)
    VALUES ($1, '{}', NULL, 1, 0, $2)
  ON CONFLICT (session_key) DO UPDATE SET epoch = sessions.epoch + 1, updated_at = excluded.updated_at
  RETURNING epoch`;

/** SQL: `name`'s timeout cut to `ms` milliseconds (kept when already shorter; 0 means none). */
function cutTimeout(name: string, ms: string): string {
  const current = `(extract(epoch from current_setting('${name}')::interval) * 1000)::bigint`;
  return `set_config('${name}', (CASE WHEN ${current} = 0 THEN ${ms} ELSE least(${current}, ${ms}) END)::text, true)`;
}

/**
 * The fence check with a lease, one statement: the session row at the fence's epoch (FOR SHARE, as `holdSql`),
 * the lease's remaining time, and (while it runs) the transaction's timeouts cut to it (`set_config(…, true)` is
 * `SET LOCAL`: they end with the transaction).
 */
const leaseHoldSql = (remainingMs: string): string => `
  SELECT l.ms AS remaining_ms, CASE WHEN l.ms > 0 THEN concat(
    ${cutTimeout('statement_timeout', 'l.ms')},
    ${cutTimeout('lock_timeout', 'l.ms')},
    ${cutTimeout('idle_in_transaction_session_timeout', 'l.ms')}) END AS timeouts
  FROM sessions s CROSS JOIN (SELECT (${remainingMs})::bigint AS ms) l
  WHERE s.session_key = $1 AND s.epoch = $2
  FOR SHARE OF s`;

function refusal(fence: SessionFence, why: string): RuntimeError {
  return new RuntimeError(
    'fenced',
    `session "${fence.sessionKey}" is no longer owned under epoch ${fence.epoch}: ${why}`,
    {
      details: { sessionKey: fence.sessionKey, epoch: fence.epoch },
    },
  );
}

/**
 * Check the fence in the transaction of the write that follows; `fenced` once the epoch moved on, or once the
 * fence's lease ended (then the transaction is bounded by the lease, and checks it again before COMMIT).
 */
async function holdFence(query: PostgresQuery, fence: SessionFence): Promise<void> {
  const { lease } = fence;
  if (lease === undefined) {
    const { rowCount } = await query(holdSql, [fence.sessionKey, fence.epoch]);
    if (rowCount === 0) throw refusal(fence, 'another worker claimed it');
    return;
  }
  const { rows } = await query<{ remaining_ms: number | null }>(leaseHoldSql(lease.remainingMs), [
    fence.sessionKey,
    fence.epoch,
    lease.holder,
  ]);
  const row = rows[0];
  if (row === undefined) throw refusal(fence, 'another worker claimed it');
  if (row.remaining_ms === null || row.remaining_ms <= 0)
    throw refusal(fence, 'the lease it was claimed under ended');
  checkBeforeCommit(query, lease.commitCheck);
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
