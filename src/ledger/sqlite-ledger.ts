import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import { createDeltaCoalescer, coalesceMs, type CoalescedBatch } from './delta-coalescer.js';
import { createGroupCommit } from './group-commit.js';
import { pausedRunStatuses, type Ledger, type TurnRecord } from './ledger.js';
import {
  openRunRow,
  runCloseRow,
  runStatusRow,
  inboxRow,
  sessionRow,
  turnRow,
  eventRow,
} from './sqlite-params.js';
import {
  constraint,
  corrupt,
  toInboxRecord,
  toRunRecord,
  toSessionRecord,
  toTurnRecord,
  type EventRow,
  type InboxRow,
  type RunRow,
  type SessionRow,
  type TurnRow,
} from './sqlite-rows.js';
import { createCorruptRowLog } from './sqlite-corrupt-rows.js';
import { readEventRow } from './sqlite-event-rows.js';
import { createSqliteSessionState } from './sqlite-session-state.js';
import { openDatabase } from './sqlite-open.js';
import { createSqliteConsumers } from './sqlite-consumers.js';
import { createSqlitePlans } from './sqlite-plans.js';
import { prepareStatements } from './sqlite-statements.js';
import { createSqliteToolCalls } from './sqlite-tool-calls.js';

/** Options of the SQLite ledger. */
export interface SqliteLedgerOptions {
  /** The database file, or ':memory:'. */
  readonly path: string;
  /** FULL fsyncs every commit (survives power loss); NORMAL only at checkpoints (survives a crash). @default 'full' */
  readonly synchronous?: 'full' | 'normal';
  /** Open an existing file for reading only (the CLI): no lock, no migration, no writes. @default false */
  readonly readonly?: boolean;
}

/** The statuses `setRunStatus` moves a run between. */
const openStatuses = new Set<string>(['running', ...pausedRunStatuses]);

/**
 * The embedded ledger on SQLite (better-sqlite3, WAL). Writes are group-committed (one transaction per event-loop
 * turn), token deltas are stored coalesced, and one process at a time may write a file (`ledger_locked`).
 */
export function createSqliteLedger(options: SqliteLedgerOptions): Ledger {
  const { db, lock } = openDatabase(options);
  const sql = prepareStatements(db);
  const commits = createGroupCommit(db, (flush) => setImmediate(flush));
  const deltas = createDeltaCoalescer();
  let closed = false;
  let lastAppended = (sql.maxCursor.get() as { cursor: number | null }).cursor ?? 0;
  let drainTimer: NodeJS.Timeout | undefined;

  const refusal = (): RuntimeError | undefined =>
    closed
      ? new RuntimeError('runtime_closed', 'the ledger is closed')
      : options.readonly === true
        ? new RuntimeError('invalid_input', `${options.path} is open read-only`)
        : undefined;
  const write = (work: () => void, statements: 'one' | 'many' = 'many'): Promise<void> => {
    const refused = refusal();
    return refused === undefined ? commits.write(work, statements) : Promise.reject(refused);
  };
  const writeEvents = (events: readonly RuntimeEvent[]): Promise<void> =>
    events.length === 0
      ? Promise.resolve()
      : write(() => events.forEach((event) => sql.appendEvent.run(eventRow(event))));
  /** Write a batch; the deltas buffered in it are durable when the write is. */
  const writeBatch = (batch: CoalescedBatch): Promise<void> => {
    const written = writeEvents(batch.write);
    for (const buffer of batch.flushed) {
      written.then(
        () => buffer.resolve(),
        (error: unknown) => buffer.reject(error),
      );
    }
    return written;
  };
  /** Reads see every earlier write: they run in the open transaction, after buffered deltas went in. */
  const read = <T>(work: () => T): Promise<T> => {
    if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the ledger is closed'));
    try {
      void writeBatch(deltas.drain()).catch(() => undefined);
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const armDrain = (): void => {
    drainTimer ??= setTimeout(() => {
      drainTimer = undefined;
      if (!closed) void writeBatch(deltas.drain()).catch(() => undefined);
    }, coalesceMs);
    drainTimer.unref();
  };

  const toolCalls = createSqliteToolCalls({ db, write, read });
  const plans = createSqlitePlans({ db, write, read });
  const consumers = createSqliteConsumers({ db, write, read });

  const corruptRows = createCorruptRowLog();
  const sessions = createSqliteSessionState({ sql, latestBatch: toolCalls.latestBatch, corruptRows });

  return {
    getSession: (sessionKey) =>
      read(() => {
        const row = sql.getSession.get(sessionKey) as SessionRow | undefined;
        return row === undefined ? undefined : toSessionRecord(row);
      }),
    loadSession: (sessionKey) => read(() => sessions.loadSession(sessionKey)),
    lastSeq: (sessionKey) => read(() => sessions.lastSeq(sessionKey)),
    onCorruptRow: (listener) => corruptRows.listen(listener),
    listSessionsWithPending: () => read(() => sessions.sessionsWithPending()),
    putSession: (record) => write(() => sql.putSession.run(sessionRow(record)), 'one'),
    listSessions: () =>
      read(() => corruptRows.readEach(sql.listSessions.all() as SessionRow[], toSessionRecord)),

    appendMessage: (record) =>
      write(
        constraint(`inbox order ${record.order} of "${record.sessionKey}"`, () =>
          sql.appendMessage.run(inboxRow(record)),
        ),
      ),
    updateMessages: (sessionKey, messageIds, update) =>
      write(() => {
        for (const messageId of messageIds) {
          sql.updateMessage.run({
            session_key: sessionKey,
            message_id: messageId,
            status: update.status,
            run_id: update.runId ?? null,
            summary: update.summary ?? null,
          });
        }
      }),
    listMessages: (sessionKey, statuses) =>
      read(() => {
        const records = (sql.listMessages.all(sessionKey) as InboxRow[]).map(toInboxRecord);
        return statuses === undefined
          ? records
          : records.filter((record) => statuses.includes(record.status));
      }),

    openRun: (record) =>
      write(constraint(`run "${record.runId}"`, () => sql.openRun.run(openRunRow(record)))),
    closeRun: (runId, close) =>
      write(() => {
        if (sql.closeRun.run(runCloseRow(runId, close)).changes === 0) {
          throw new RuntimeError('not_found', `no run "${runId}" to close`);
        }
      }, 'one'),
    getRun: (runId) =>
      read(() => {
        const row = sql.getRun.get(runId) as RunRow | undefined;
        return row === undefined ? undefined : toRunRecord(row);
      }),
    listRuns: (sessionKey) => read(() => (sql.listRuns.all(sessionKey) as RunRow[]).map(toRunRecord)),
    // Every session's runs: a corrupt one is skipped and reported, the others are served.
    listOpenRuns: () => read(() => corruptRows.readEach(sql.listOpenRuns.all() as RunRow[], toRunRecord)),
    listPausedRuns: () => read(() => corruptRows.readEach(sql.listPausedRuns.all() as RunRow[], toRunRecord)),
    setRunStatus: (runId, status, progress) =>
      write(() => {
        if (!openStatuses.has(status)) {
          throw new RuntimeError('invalid_input', `"${String(status)}" is not the status of an open run`);
        }
        if (sql.setRunStatus.run(runStatusRow(runId, status, progress)).changes === 0) {
          throw new RuntimeError('not_found', `no open run "${runId}"`, { details: { runId } });
        }
      }, 'one'),
    runText: (runId) =>
      read(() =>
        corruptRows
          .readEach(sql.runDeltas.all(runId) as EventRow[], (row) => {
            const { event, problem } = readEventRow(row);
            if (problem !== undefined) throw problem;
            return event.type === 'assistant.delta' ? event.delta : '';
          })
          .join(''),
      ),

    appendTurns: (records: readonly TurnRecord[]) =>
      write(
        () => records.forEach((record) => sql.appendTurn.run(turnRow(record))),
        records.length === 1 ? 'one' : 'many',
      ),
    listTurns: (sessionKey, listOptions) =>
      read(() => {
        const last = listOptions?.last;
        if (last !== undefined && last <= 0) return [];
        const rows = last === undefined ? sql.listTurns.all(sessionKey) : sql.lastTurns.all(sessionKey, last);
        return (rows as TurnRow[]).map(toTurnRecord);
      }),
    listRunTurns: (runId) => read(() => (sql.listRunTurns.all(runId) as TurnRow[]).map(toTurnRecord)),

    ...toolCalls.methods,
    ...plans,
    ...consumers,

    appendEvents(events) {
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
    readEvents: (query) =>
      read(() => {
        const after = query.after ?? 0;
        const limit = query.limit ?? -1;
        const rows =
          query.sessionKey === undefined
            ? sql.readEvents.all(after, limit)
            : sql.readSessionEvents.all(query.sessionKey, after, limit);
        return (rows as EventRow[]).map((row) => {
          const { event, problem } = readEventRow(row);
          if (problem !== undefined) corruptRows.report(problem);
          return event;
        });
      }),
    lastCursor: () =>
      read(() => {
        const pruned = Number((sql.getMeta.get('last_cursor') as { value: string } | undefined)?.value ?? 0);
        return Math.max(pruned, (sql.maxCursor.get() as { cursor: number | null }).cursor ?? 0);
      }),
    pruneEvents: (before) =>
      read(() => {
        const high = (sql.maxCursor.get() as { cursor: number | null }).cursor ?? 0;
        return db.transaction(() => {
          sql.putMeta.run('last_cursor', String(Math.max(high, lastAppended)));
          sql.markSeqs.run(before);
          return sql.pruneEvents.run(before).changes;
        })();
      }),

    loadProfileStates: () =>
      read(() => {
        const states = new Map<string, unknown>();
        for (const row of sql.loadProfiles.all() as { profile_id: string; state: string }[]) {
          try {
            states.set(row.profile_id, JSON.parse(row.state) as unknown);
          } catch {
            // The profile starts afresh; the others keep their cooldowns.
            corruptRows.report(corrupt('auth_profiles', `"${row.profile_id}"`, 'state is not valid JSON'));
          }
        }
        return states;
      }),
    saveProfileState: (profileId, state, at) =>
      write(() => sql.saveProfile.run(profileId, JSON.stringify(state), at), 'one'),

    async close() {
      if (closed) return;
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      const last = writeBatch(deltas.drain());
      commits.commit();
      // A failed last write, checkpoint or close still closes the file and releases the writer lock.
      try {
        await last;
      } finally {
        closed = true;
        try {
          if (!options.readonly && options.path !== ':memory:') db.pragma('wal_checkpoint(TRUNCATE)');
        } finally {
          try {
            db.close();
          } finally {
            lock?.release();
          }
        }
      }
    },
  };
}
