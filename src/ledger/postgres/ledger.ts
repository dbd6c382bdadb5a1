import type { Ledger } from '../index.js';
import type { PostgresAccess } from './access.js';
import { createPostgresCompensations } from './compensations.js';
import { openPostgresConnection } from './connection.js';
import { createPostgresConsumers } from './consumers.js';
import { createPostgresDeliveries } from './deliveries.js';
import type { PostgresEventWriter } from './event-writer.js';
import { createPostgresEvents } from './events.js';
import { claimSession, fencedAccess, fencedEvents, type SessionFence } from './fence.js';
import { createPostgresInbox } from './inbox.js';
import { createPostgresPlans } from './plans.js';
import { createPostgresProfiles } from './profiles.js';
import { createPostgresRecovery } from './recovery.js';
import { createPostgresRuns } from './runs.js';
import { createPostgresSessions } from './sessions.js';
import { createPostgresSessionBatch } from './session-batch.js';
import { createPostgresToolCalls } from './tool-calls.js';
import { createPostgresTranscript, type TranscriptMemory } from './transcript.js';
import { createCorruptRowLog, type CorruptRowLog } from '../sql/corrupt-rows.js';

/** Options of the Postgres ledger. */
export interface PostgresLedgerOptions {
  /** A libpq connection string (`postgres://user:password@host:5432/db`); its password never reaches a message. */
  readonly connectionString: string;
  /** The schema of the ledger's tables (created when missing; a lowercase identifier). @default 'agentlanes' */
  readonly schema?: string;
  /** How long connecting may take before a call fails with `ledger_unavailable`, in ms. @default 5000 */
  readonly connectTimeoutMs?: number;
  /**
   * How long the server lets one of the ledger's transactions sit idle (a stalled process holding a session's
   * fence) before it ends it, in ms: the bound on how long a stalled owner can delay a takeover. @default 10000
   */
  readonly idleInTransactionTimeoutMs?: number;
}

/**
 * The Postgres ledger, with fencing: `claimSession` makes a process the owner of a session (its epoch moves on),
 * and the ledger `fenced` by that epoch refuses every write (`fenced`) once another process claimed it since.
 */
export interface PostgresLedger extends Ledger {
  /** Bump the session's epoch (creating its record when missing) and resolve the new one, which fences the old. */
  claimSession(sessionKey: string, at: number): Promise<number>;
  /**
   * The same ledger seen by the owner of `fence`: reads as usual, every write checked against the session's epoch
   * in the transaction that makes it (refused with `fenced`, nothing written, once the epoch moved on). Its
   * `putSession` stores the fence's epoch. Closing the view leaves the ledger open.
   */
  fenced(fence: SessionFence): Ledger;
  /** Connect and migrate now; rejects as the first call would otherwise (`ledger_unavailable`, `ledger_version`). */
  ready(): Promise<void>;
}

/** Every store over one access path (the ledger's own, or a fenced one). */
function createStores(
  access: PostgresAccess,
  events: Pick<PostgresEventWriter, 'append' | 'lastAppended'>,
  corruptRows: CorruptRowLog,
  memory: TranscriptMemory,
): Omit<Ledger, 'close'> {
  const toolCalls = createPostgresToolCalls(access);
  const runs = createPostgresRuns(access, corruptRows, toolCalls.latestBatch);
  return {
    ...createPostgresSessions(access, corruptRows),
    ...createPostgresInbox(access),
    ...runs.methods,
    ...createPostgresTranscript(access, corruptRows, memory),
    ...toolCalls.methods,
    ...createPostgresCompensations(access),
    ...createPostgresPlans(access),
    ...createPostgresEvents(access, events, corruptRows),
    ...createPostgresConsumers(access),
    ...createPostgresDeliveries(access),
    ...createPostgresProfiles(access, corruptRows),
    ...createPostgresRecovery(access, { corruptRows, pausedOf: runs.pausedOf }),
    ...createPostgresSessionBatch(access, toolCalls.latestBatch),
  };
}

/**
 * The distributed profile's ledger on Postgres (`pg`, imported when first used). Every call goes through one
 * ordered queue on one connection, each event-loop turn's calls in one transaction (group commit); the schema is
 * migrated at open under an advisory lock. Connection failures are `ledger_unavailable`, the password redacted.
 *
 * A session's latest turns are answered from memory by the owner of its fence (no other process writes it while
 * the fence holds; what was kept of it is forgotten when the fence is taken), and by the ledger itself once it
 * appended turns and as long as it was never `fenced`: a ledger that writes without fences is its sessions' one
 * writer (one process, `cluster: false`); one that only reads, or a cluster worker's, reads the database.
 */
export function createPostgresLedger(options: PostgresLedgerOptions): PostgresLedger {
  const connection = openPostgresConnection(options);
  const corruptRows = createCorruptRowLog();
  const cache = connection.turns;
  let fencedOnce = false;
  let appendedUnfenced = false;
  const stores = createStores(connection, connection.events, corruptRows, {
    cache,
    answers: () => appendedUnfenced && !fencedOnce,
  });
  return {
    ...stores,
    appendTurns: (records) => {
      if (records.length > 0) appendedUnfenced = true;
      return stores.appendTurns(records);
    },
    claimSession: (sessionKey, at) => claimSession(connection, sessionKey, at),
    fenced(fence) {
      fencedOnce = true;
      // Another process may have written the session before this fence was taken: what was kept of it is stale.
      cache.learn(fence.sessionKey, undefined, [], false);
      const access = fencedAccess(connection, fence);
      const view = createStores(access, fencedEvents(connection.events, access, fence), corruptRows, {
        cache,
        answers: () => true,
      });
      return {
        ...view,
        putSession: (record) => view.putSession({ ...record, epoch: fence.epoch }),
        close: () => Promise.resolve(),
      };
    },
    // Jobs run in call order, a batch in one transaction: the close asks, as it runs, whether a write it is tied to
    // failed (runs.ts), and a batch that fails fails it with them.
    closesWith: (writes) => connection.unfailed(writes),
    ready: () => connection.ready(),
    close: () => connection.close(),
  };
}
