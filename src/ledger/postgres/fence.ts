import { RuntimeError } from '../../core/index.js';
import type { RuntimeEvent } from '../../core/index.js';
import type { PostgresAccess } from './access.js';
import type { PostgresEventWriter } from './event-writer.js';
import { insertEvents } from './event-writer.js';
import { batchTags, checkBeforeCommit, type PostgresQuery } from './queue.js';

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
  /**
   * A statement (its values inlined) run before the COMMIT of every transaction that appended events under the
   * lease, in the COMMIT's own message: once per transaction, however many appends it holds (a cluster's ring).
   */
  readonly eventsWritten?: string | undefined;
}

// FOR SHARE holds the session rows until this transaction ends: a claim (an UPDATE of the row) waits for it, so no
// write can pass the check and then commit after a newer owner's claim did. Every fence of the batch is checked in
// one statement: the rows returned are those still at their fence's epoch.
const holdSql = `SELECT s.session_key, s.epoch FROM sessions s
  JOIN unnest($1::text[], $2::bigint[]) AS f(session_key, epoch) ON s.session_key = f.session_key AND s.epoch = f.epoch
  FOR SHARE OF s`;
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
 * The fence check with a lease, one statement for every fence of the batch under that lease: the session rows at
 * their fence's epoch (FOR SHARE, as `holdSql`), the lease's remaining time, and (while it runs) the
 * transaction's timeouts cut to it (`set_config(…, true)` is `SET LOCAL`: they end with the transaction). The
 * lease is read even when no row matches (the LEFT JOIN), and the timeouts are cut once.
 */
const leaseHoldSql = (remainingMs: string): string => `
  WITH l AS MATERIALIZED (SELECT (${remainingMs})::bigint AS ms),
    cut AS MATERIALIZED (SELECT CASE WHEN l.ms > 0 THEN concat(
      ${cutTimeout('statement_timeout', 'l.ms')},
      ${cutTimeout('lock_timeout', 'l.ms')},
      ${cutTimeout('idle_in_transaction_session_timeout', 'l.ms')}) END AS timeouts FROM l)
  SELECT l.ms AS remaining_ms, cut.timeouts, s.session_key, s.epoch
  FROM l CROSS JOIN cut LEFT JOIN (SELECT s.session_key, s.epoch FROM sessions s
    JOIN unnest($1::text[], $2::bigint[]) AS f(session_key, epoch) ON s.session_key = f.session_key AND s.epoch = f.epoch
    FOR SHARE OF s) s ON true`;

function refusal(fence: SessionFence, why: string): RuntimeError {
  return new RuntimeError(
    'fenced',
    `session "${fence.sessionKey}" is no longer owned under epoch ${fence.epoch}: ${why}`,
    {
      details: { sessionKey: fence.sessionKey, epoch: fence.epoch },
    },
  );
}

/** What the open transaction learned of a fence: held (its row locked), or refused (why). */
type Checked = true | RuntimeError;

/**
 * The fences the open transaction already checked, keyed by the transaction's query function, which the queue
 * replaces after any rollback (see `PostgresQuery`), so a lock rolled back is never taken for held.
 */
const checkedInTransaction = new WeakMap<PostgresQuery, Map<string, Checked>>();

const fenceId = (fence: SessionFence): string => `${fence.epoch}\u0000${fence.sessionKey}`;
const leaseOf = (fence: SessionFence): string => fence.lease?.holder ?? '';

/**
 * Check `fence` and, in the same statement, every other fence of the batch under the same lease (`batchTags`) that
 * the transaction has not checked yet: `fenced` once an epoch moved on, or once the lease ended (then the
 * transaction is bounded by the lease, and checks it again before COMMIT).
 */
async function checkFences(
  query: PostgresQuery,
  fence: SessionFence,
  checked: Map<string, Checked>,
): Promise<void> {
  const batch = new Map<string, SessionFence>([[fenceId(fence), fence]]);
  for (const tag of batchTags(query)) {
    const other = tag as SessionFence;
    if (leaseOf(other) === leaseOf(fence) && !checked.has(fenceId(other))) batch.set(fenceId(other), other);
  }
  const fences = [...batch.values()];
  const values = [fences.map((each) => each.sessionKey), fences.map((each) => each.epoch)];
  const { lease } = fence;
  const { rows } = await query<{
    session_key: string | null;
    epoch: number | null;
    remaining_ms?: number | null;
  }>(
    lease === undefined ? holdSql : leaseHoldSql(lease.remainingMs),
    lease === undefined ? values : [...values, lease.holder],
  );
  const remaining = lease === undefined ? 1 : (rows[0]?.remaining_ms ?? null);
  const held = new Set(rows.map((row) => `${row.epoch}\u0000${row.session_key}`));
  const running = remaining !== null && remaining > 0;
  for (const [id, each] of batch) {
    if (!held.has(id)) checked.set(id, refusal(each, 'another worker claimed it'));
    else checked.set(id, running ? true : refusal(each, 'the lease it was claimed under ended'));
  }
  if (lease !== undefined && running) checkBeforeCommit(query, lease.commitCheck);
}

/** Bump a session's epoch (its record created when missing); resolves the new epoch. */
export function claimSession(access: PostgresAccess, sessionKey: string, at: number): Promise<number> {
  return access.write(async (query) => {
    const { rows } = await query<{ epoch: number }>(claimSql, [sessionKey, at]);
    return rows[0]?.epoch ?? 0;
  });
}

/**
 * The access of a fence's owner: every write runs after the fence check, once per transaction and session (the
 * batch's other fences checked in the same statement). The fence is the tag of its writes (see `PostgresWork`).
 */
export function fencedAccess(access: PostgresAccess, fence: SessionFence): PostgresAccess {
  const id = fenceId(fence);
  return {
    ...access,
    write: (work) =>
      access.write(
        Object.assign(
          async (query: PostgresQuery) => {
            let checked = checkedInTransaction.get(query);
            if (checked === undefined)
              checkedInTransaction.set(query, (checked = new Map<string, Checked>()));
            if (!checked.has(id)) await checkFences(query, fence, checked);
            const outcome = checked.get(id);
            if (outcome !== true) throw outcome ?? refusal(fence, 'not checked');
            return work(query);
          },
          { tag: fence },
        ),
      ),
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
  fence: SessionFence,
): Pick<PostgresEventWriter, 'append' | 'lastAppended'> {
  const written = fence.lease?.eventsWritten;
  return {
    append: (events: readonly RuntimeEvent[]) =>
      events.length === 0
        ? Promise.resolve()
        : access.write(async (query) => {
            await insertEvents(query, events, access.refusedCloses, 'renumber');
            writer.seed(events.at(-1)?.cursor ?? 0);
            if (written !== undefined) checkBeforeCommit(query, written);
          }),
    lastAppended: () => writer.lastAppended(),
  };
}
