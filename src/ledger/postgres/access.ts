import type { PostgresWork } from './queue.js';
import type { RefusedCloses } from '../sql/params.js';

/**
 * How the Postgres ledger's stores run their work: every read and write goes through one ordered queue, so a read
 * sees every write called before it (a read of the event log also sees the token deltas still buffered, which go
 * in first). `write` may carry a fence (see postgres/fence.ts); `read` never does.
 */
export interface PostgresAccess {
  readonly write: <T = void>(work: PostgresWork<T>) => Promise<T>;
  readonly read: <T>(work: PostgresWork<T>) => Promise<T>;
  readonly readEventLog: <T>(work: PostgresWork<T>) => Promise<T>;
  /** The schema the tables live in. */
  readonly schema: string;
  /** Why a write this access handed out failed, once it did (`PostgresQueue.failureOf`). */
  readonly failureOf: (write: Promise<unknown>) => Error | undefined;
  /** The runs whose close was refused for a failed tied write (`RefusedCloses`): their `run.ended` is refused. */
  readonly refusedCloses: RefusedCloses;
}
