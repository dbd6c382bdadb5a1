import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { InboxRecord, Ledger, RunRecord, SessionRecord, TurnRecord } from './ledger.js';

/** A session as stored: the snapshot kept as JSON text, like SQLite does, so idle sessions stay small. */
interface StoredSession {
  readonly sessionKey: string;
  readonly override: Readonly<Record<string, unknown>>;
  readonly snapshotJson: string | undefined;
  readonly epoch: number;
  readonly lastSeq: number;
  readonly updatedAt: number;
}

/** A session's inbox: records in `order`, and each message id's position in that list. */
interface Inbox {
  readonly records: InboxRecord[];
  readonly positions: Map<string, number>;
}

/** The index of the first item whose cursor is greater than `after` (cursors strictly increase). */
function firstAfter(events: readonly RuntimeEvent[], after: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((events[middle] as RuntimeEvent).cursor > after) high = middle;
    else low = middle + 1;
  }
  return low;
}

function copyRun(record: RunRecord): RunRecord {
  const copy: RunRecord = { ...record, messageIds: [...record.messageIds], usage: { ...record.usage } };
  return record.error ? { ...copy, error: { ...record.error } } : copy;
}

function copyTurn(record: TurnRecord): TurnRecord {
  // Tool-call args are arbitrary data, so only turns that carry them pay for a deep copy.
  if (record.toolCalls) return structuredClone(record);
  return record.messageIds ? { ...record, messageIds: [...record.messageIds] } : { ...record };
}

function listFor<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}

/** Create a ledger that keeps everything in memory (tests, demos); it forgets all when the process ends. */
export function createMemoryLedger(): Ledger {
  let closed = false;
  const sessions = new Map<string, StoredSession>();
  const inboxes = new Map<string, Inbox>();
  const runs = new Map<string, RunRecord>();
  const runsBySession = new Map<string, string[]>();
  const openRuns = new Set<string>();
  const turns = new Map<string, TurnRecord[]>();
  // Events are immutable once emitted, so they are stored as given (no copy): the hot path.
  const events: RuntimeEvent[] = [];
  const eventsBySession = new Map<string, RuntimeEvent[]>();

  // Every method does its work synchronously, so a read called after a write sees it, and reports
  // through the returned promise (a closed ledger rejects instead of throwing).
  // Writes resolve to nothing: they share one settled promise instead of allocating one each (hot path).
  const done: Promise<undefined> = Promise.resolve(undefined);
  const perform = <T>(work: () => T): Promise<T> => {
    if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the ledger is closed'));
    try {
      const result = work();
      return result === undefined ? (done as Promise<T>) : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };

  const inboxOf = (sessionKey: string): Inbox => {
    let inbox = inboxes.get(sessionKey);
    if (!inbox) {
      inbox = { records: [], positions: new Map() };
      inboxes.set(sessionKey, inbox);
    }
    return inbox;
  };

  const toSessionRecord = (stored: StoredSession): SessionRecord => ({
    sessionKey: stored.sessionKey,
    override: stored.override,
    snapshot: stored.snapshotJson === undefined ? undefined : (JSON.parse(stored.snapshotJson) as unknown),
    epoch: stored.epoch,
    lastSeq: stored.lastSeq,
    updatedAt: stored.updatedAt,
  });

  return {
    getSession: (sessionKey) =>
      perform(() => {
        const stored = sessions.get(sessionKey);
        return stored && toSessionRecord(stored);
      }),

    putSession: (record) =>
      perform(() => {
        sessions.set(record.sessionKey, {
          sessionKey: record.sessionKey,
          override: structuredClone(record.override),
          snapshotJson: record.snapshot === undefined ? undefined : JSON.stringify(record.snapshot),
          epoch: record.epoch,
          lastSeq: record.lastSeq,
          updatedAt: record.updatedAt,
        });
      }),

    listSessions: () => perform(() => [...sessions.values()].map(toSessionRecord)),

    appendMessage: (record) =>
      perform(() => {
        const { records, positions } = inboxOf(record.sessionKey);
        const last = records[records.length - 1];
        if (last === undefined || last.order < record.order) {
          // A platform id accepted again (after the dedupe window) is a new record; updates go to the newest.
          positions.set(record.messageId, records.push({ ...record }) - 1);
          return;
        }
        // Out-of-order arrival is rare: insert in place and renumber the positions after it.
        let index = records.findIndex((existing) => existing.order >= record.order);
        if (records[index]?.order === record.order) {
          throw new RuntimeError('invalid_input', `inbox order ${record.order} is already recorded`, {
            details: { sessionKey: record.sessionKey, order: record.order },
          });
        }
        records.splice(index, 0, { ...record });
        for (; index < records.length; index++) {
          positions.set((records[index] as InboxRecord).messageId, index);
        }
      }),

    updateMessages: (sessionKey, messageIds, update) =>
      perform(() => {
        const inbox = inboxes.get(sessionKey);
        if (!inbox) return;
        for (const messageId of messageIds) {
          const index = inbox.positions.get(messageId);
          if (index === undefined) continue;
          const current = inbox.records[index] as InboxRecord;
          // Replace rather than mutate: records already handed out must not change under their holders.
          inbox.records[index] = {
            ...current,
            status: update.status,
            ...(update.runId === undefined ? {} : { runId: update.runId }),
            ...(update.summary === undefined ? {} : { summary: update.summary }),
          };
        }
      }),

    listMessages: (sessionKey, statuses) =>
      perform(() => {
        const records = inboxes.get(sessionKey)?.records ?? [];
        return statuses ? records.filter((record) => statuses.includes(record.status)) : records.slice();
      }),

    openRun: (record) =>
      perform(() => {
        if (runs.has(record.runId)) {
          throw new RuntimeError('invalid_input', `run ${record.runId} is already recorded`, {
            details: { runId: record.runId },
          });
        }
        runs.set(record.runId, copyRun(record));
        listFor(runsBySession, record.sessionKey).push(record.runId);
        if (record.status === 'running') openRuns.add(record.runId);
      }),

    closeRun: (runId, close) =>
      perform(() => {
        const current = runs.get(runId);
        if (!current) throw new RuntimeError('not_found', `no run ${runId}`, { details: { runId } });
        const { error: _previousError, ...rest } = current;
        runs.set(runId, {
          ...rest,
          status: close.status,
          endedAt: close.endedAt,
          text: close.text,
          usage: { ...close.usage },
          ...(close.error ? { error: { ...close.error } } : {}),
        });
        openRuns.delete(runId);
      }),

    getRun: (runId) => perform(() => runs.get(runId)),

    listRuns: (sessionKey) =>
      perform(() => (runsBySession.get(sessionKey) ?? []).map((runId) => runs.get(runId) as RunRecord)),

    listOpenRuns: () => perform(() => [...openRuns].map((runId) => runs.get(runId) as RunRecord)),

    appendTurns: (records) =>
      perform(() => {
        for (const record of records) listFor(turns, record.sessionKey).push(copyTurn(record));
      }),

    listTurns: (sessionKey, options) =>
      perform(() => {
        const all = turns.get(sessionKey) ?? [];
        const last = options?.last;
        return last === undefined ? all.slice() : last <= 0 ? [] : all.slice(-last);
      }),

    appendEvents: (batch) =>
      perform(() => {
        // Check the whole batch first so a bad one changes nothing.
        let previous = events[events.length - 1]?.cursor ?? Number.NEGATIVE_INFINITY;
        for (const event of batch) {
          if (!(event.cursor > previous)) {
            throw new RuntimeError('invalid_input', `event cursor ${event.cursor} is not above ${previous}`);
          }
          previous = event.cursor;
        }
        for (const event of batch) {
          events.push(event);
          listFor(eventsBySession, event.sessionKey).push(event);
        }
      }),

    readEvents: (query) =>
      perform(() => {
        const source =
          query.sessionKey === undefined ? events : (eventsBySession.get(query.sessionKey) ?? []);
        const start = query.after === undefined ? 0 : firstAfter(source, query.after);
        const end = query.limit === undefined ? source.length : start + Math.max(0, query.limit);
        return source.slice(start, end);
      }),

    lastCursor: () => perform(() => events[events.length - 1]?.cursor ?? 0),

    close: () => {
      // Closing twice is harmless; everything else rejects once closed.
      closed = true;
      return Promise.resolve();
    },
  };
}
