import type { RuntimeEvent } from '../core/events.js';
import type { Ledger } from '../ledger/index.js';
import type { ClusterDatabase } from './cluster-db.js';

/** Where an event batch goes: the ledger view that writes one session's events (fenced by its epoch). */
export type EventTarget = (sessionKey: string) => Pick<Ledger, 'appendEvents'>;

/** What the sequencer needs: the cluster's connections, the ledger's end of log, and a ring once written. */
export interface EventSequencerDeps {
  readonly database: () => Promise<ClusterDatabase>;
  readonly lastCursor: () => Promise<number>;
  readonly target: EventTarget;
  readonly written: () => void;
}

interface Waiting {
  readonly events: readonly RuntimeEvent[];
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** Consecutive events of one session, in order (a batch never reorders events of different sessions). */
function runsOf(events: readonly RuntimeEvent[]): RuntimeEvent[][] {
  const runs: RuntimeEvent[][] = [];
  for (const event of events) {
    const last = runs.at(-1);
    if (last !== undefined && last[0]?.sessionKey === event.sessionKey) last.push(event);
    else runs.push([event]);
  }
  return runs;
}

/**
 * Give events cluster-wide cursors. Each process's bus numbers its events itself, which several processes on one
 * log cannot do; so the events of one process are written in batches, one batch at a time across the cluster (a
 * transaction-scoped advisory lock of the cluster's own), each batch renumbered after the log's last cursor just
 * before it is appended. The event objects are renumbered in place: the bus delivers those same objects once
 * durable, so subscribers see the cursors the log holds. The ledger still checks that every append lands above
 * the log's end, so a batch whose lock was lost (a stall past the idle timeout) is refused, never misordered.
 */
export function createEventSequencer(
  deps: EventSequencerDeps,
): (events: readonly RuntimeEvent[]) => Promise<void> {
  let waiting: Waiting[] = [];
  let flushing: Promise<void> | undefined;
  const flush = async (): Promise<void> => {
    while (waiting.length > 0) {
      const batch = waiting;
      waiting = [];
      await writeBatch(deps, batch);
    }
    flushing = undefined;
  };
  return (events) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ events, resolve, reject });
      flushing ??= new Promise<void>((next) => setImmediate(next)).then(flush);
    });
}

async function writeBatch(deps: EventSequencerDeps, batch: readonly Waiting[]): Promise<void> {
  const outcomes = new Map<Waiting, unknown>();
  let appended = false;
  try {
    const database = await deps.database();
    await database.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `agentlanes:cluster-events:${database.schema}`,
      ]);
      let cursor = await deps.lastCursor();
      for (const entry of batch)
        for (const event of entry.events) (event as { cursor: number }).cursor = ++cursor;
      const writes = batch.map((entry) =>
        Promise.all(
          runsOf(entry.events).map((run) => deps.target(run[0]?.sessionKey ?? '').appendEvents(run)),
        ).then(
          () => undefined,
          (error: unknown) => outcomes.set(entry, error),
        ),
      );
      await Promise.all(writes);
      appended = true;
    });
  } catch (error) {
    // Once the appends settled, a failed COMMIT only released the lock early: their own outcomes stand.
    if (!appended) for (const entry of batch) if (!outcomes.has(entry)) outcomes.set(entry, error);
  }
  deps.written();
  for (const entry of batch) {
    if (outcomes.has(entry)) entry.reject(outcomes.get(entry));
    else entry.resolve();
  }
}
