import type { Ledger } from '../index.js';
import { createSqliteCompensations } from './compensations.js';
import { openSqliteConnection } from './connection.js';
import { createSqliteConsumers } from './consumers.js';
import { createSqliteDeliveries } from './deliveries.js';
import { createCorruptRowLog } from '../sql/corrupt-rows.js';
import { createSqliteEvents } from './events.js';
import { createSqliteInbox } from './inbox.js';
import { createSqlitePlans } from './plans.js';
import { createSqliteProfiles } from './profiles.js';
import { createSqliteRecovery } from './recovery.js';
import { createSqliteRuns } from './runs.js';
import { createSqliteSessions } from './sessions.js';
import { createSqliteSessionBatch } from './session-batch.js';
import { createSqliteToolCalls } from './tool-calls.js';
import { createSqliteTranscript } from './transcript.js';

/** Options of the SQLite ledger. */
export interface SqliteLedgerOptions {
  /** The database file, or ':memory:'. */
  readonly path: string;
  /** FULL fsyncs every commit (survives power loss); NORMAL only at checkpoints (survives a crash). @default 'full' */
  readonly synchronous?: 'full' | 'normal';
  /** Open an existing file for reading only (the CLI): no lock, no migration, no writes. @default false */
  readonly readonly?: boolean;
}

/**
 * The embedded ledger on SQLite (better-sqlite3, WAL). Writes are group-committed (one transaction per event-loop
 * turn), token deltas are stored coalesced, and one process at a time may write a file (`ledger_locked`).
 */
export function createSqliteLedger(options: SqliteLedgerOptions): Ledger {
  const connection = openSqliteConnection(options);
  const corruptRows = createCorruptRowLog();
  const toolCalls = createSqliteToolCalls(connection);
  const runs = createSqliteRuns(connection, corruptRows, toolCalls.latestBatch);
  return {
    ...createSqliteSessions(connection, corruptRows),
    ...createSqliteInbox(connection),
    ...runs.methods,
    ...createSqliteTranscript(connection, corruptRows),
    ...toolCalls.methods,
    ...createSqliteCompensations(connection),
    ...createSqlitePlans(connection),
    ...createSqliteEvents(connection, connection.events, corruptRows),
    ...createSqliteConsumers(connection),
    ...createSqliteDeliveries(connection),
    ...createSqliteProfiles(connection, corruptRows),
    ...createSqliteRecovery(connection, { corruptRows, pausedOf: runs.pausedOf }),
    ...createSqliteSessionBatch(connection, toolCalls.latestBatch),
    // One connection, one open transaction at a time, committed in the order its writes were called.
    writesCommitInOrder: true,
    // A storage fault fails a whole transaction; a refused row fails the close tied to it (runs.ts).
    closesWith: (writes) => connection.unfailed(writes),
    close: () => connection.close(),
  };
}
