import { RuntimeError } from '../core/errors.js';
import {
  recentLimit,
  type InboxRecord,
  type Ledger,
  type SessionRecord,
  type SessionState,
  type TurnRecord,
} from './ledger.js';
import { createMemoryConsumers } from './memory-consumers.js';
import { createMemoryEvents } from './memory-events.js';
import { createMemoryPlans } from './memory-plans.js';
import { createMemoryRuns } from './memory-runs.js';
import { createMemoryToolCalls } from './memory-tool-calls.js';

/** A session as stored: the snapshot kept as JSON text, like SQLite does, so idle sessions stay small. */
interface StoredSession {
  readonly sessionKey: string;
  readonly override: Readonly<Record<string, unknown>>;
  readonly snapshotJson: string | undefined;
  readonly epoch: number;
  readonly lastSeq: number;
  readonly updatedAt: number;
  readonly toolPolicyJson: string | undefined;
}

/** A session's inbox: records in `order`, and each message id's position in that list. */
interface Inbox {
  readonly records: InboxRecord[];
  readonly positions: Map<string, number>;
}

/** A copy of a turn that the caller cannot change the ledger through. */
function copyTurn(record: TurnRecord): TurnRecord {
  // Tool-call args are arbitrary data, so only turns that carry them pay for a deep copy.
  if (record.toolCalls) return structuredClone(record);
  return record.messageIds ? { ...record, messageIds: [...record.messageIds] } : { ...record };
}

/** The ids of the inbound messages some turn was made of: a steer among them reached the model. */
function admittedIds(records: readonly TurnRecord[]): Set<string> {
  const ids = new Set<string>();
  for (const record of records) for (const messageId of record.messageIds ?? []) ids.add(messageId);
  return ids;
}

/** The value `map` holds for `key`, made by `create` the first time it is asked for. */
function entryFor<T>(map: Map<string, T>, key: string, create: () => T): T {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}

const createList = <T>(): T[] => [];
const createInbox = (): Inbox => ({ records: [], positions: new Map() });

/** Create a ledger that keeps everything in memory (tests, demos); it forgets all when the process ends. */
export function createMemoryLedger(): Ledger {
  let closed = false;
  const sessions = new Map<string, StoredSession>();
  const inboxes = new Map<string, Inbox>();
  const turns = new Map<string, TurnRecord[]>();
  const turnsByRun = new Map<string, TurnRecord[]>();
  const profileStates = new Map<string, string>();
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

  const toolCalls = createMemoryToolCalls(perform);
  const runs = createMemoryRuns(perform, toolCalls.latestBatch);
  const plans = createMemoryPlans(perform);
  const consumers = createMemoryConsumers(perform);
  const events = createMemoryEvents(perform);

  /** A session's records still to run: pending ones, and steered ones that no recorded turn admitted. */
  const pendingOf = (sessionKey: string, records: readonly InboxRecord[]): InboxRecord[] => {
    let admitted: Set<string> | undefined;
    return records.filter((record) => {
      if (record.status === 'pending') return true;
      if (record.status !== 'steered') return false;
      admitted ??= admittedIds(turns.get(sessionKey) ?? []);
      return !admitted.has(record.messageId);
    });
  };

  const toSessionRecord = (stored: StoredSession): SessionRecord => ({
    sessionKey: stored.sessionKey,
    override: stored.override,
    snapshot: stored.snapshotJson === undefined ? undefined : (JSON.parse(stored.snapshotJson) as unknown),
    epoch: stored.epoch,
    lastSeq: stored.lastSeq,
    updatedAt: stored.updatedAt,
    ...(stored.toolPolicyJson === undefined
      ? {}
      : { toolPolicy: JSON.parse(stored.toolPolicyJson) as unknown }),
  });

  return {
    writesAreImmediate: true,
    getSession: (sessionKey) =>
      perform(() => {
        const stored = sessions.get(sessionKey);
        return stored && toSessionRecord(stored);
      }),

    loadSession: (sessionKey) =>
      perform((): SessionState => {
        const stored = sessions.get(sessionKey);
        const records = inboxes.get(sessionKey)?.records ?? [];
        const paused = runs.pausedOf(sessionKey);
        return {
          record: stored && toSessionRecord(stored),
          lastSeq: events.lastSeqOf(sessionKey),
          // The inbox is kept in order, so its last record holds the highest order.
          lastOrder: records.at(-1)?.order ?? 0,
          pending: pendingOf(sessionKey, records),
          recent: records.slice(-recentLimit).map((record) => [record.messageId, record.acceptedAt] as const),
          ...(paused === undefined ? {} : { paused }),
        };
      }),

    listSessionsWithPending: () =>
      perform(() =>
        [...inboxes].filter(([key, inbox]) => pendingOf(key, inbox.records).length > 0).map(([key]) => key),
      ),

    putSession: (record) =>
      perform(() => {
        sessions.set(record.sessionKey, {
          sessionKey: record.sessionKey,
          override: structuredClone(record.override),
          snapshotJson: record.snapshot === undefined ? undefined : JSON.stringify(record.snapshot),
          epoch: record.epoch,
          lastSeq: record.lastSeq,
          updatedAt: record.updatedAt,
          toolPolicyJson: record.toolPolicy === undefined ? undefined : JSON.stringify(record.toolPolicy),
        });
      }),

    listSessions: () => perform(() => [...sessions.values()].map(toSessionRecord)),

    appendMessage: (record) =>
      perform(() => {
        const { records, positions } = entryFor(inboxes, record.sessionKey, createInbox);
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

    ...runs.methods,

    runText: (runId) =>
      perform(() => {
        let text = '';
        for (const event of events.all()) {
          if (event.type === 'assistant.delta' && event.runId === runId) text += event.delta;
        }
        return text;
      }),

    appendTurns: (records) =>
      perform(() => {
        for (const record of records) {
          const copy = copyTurn(record);
          entryFor(turns, record.sessionKey, createList<TurnRecord>).push(copy);
          entryFor(turnsByRun, record.runId, createList<TurnRecord>).push(copy);
        }
      }),

    listTurns: (sessionKey, options) =>
      perform(() => {
        const all = turns.get(sessionKey) ?? [];
        const last = options?.last;
        return last === undefined ? all.slice() : last <= 0 ? [] : all.slice(-last);
      }),

    listRunTurns: (runId) => perform(() => (turnsByRun.get(runId) ?? []).slice()),

    ...toolCalls.methods,
    ...plans,
    ...consumers,

    ...events.methods,

    loadProfileStates: () =>
      perform(() => new Map([...profileStates].map(([id, json]) => [id, JSON.parse(json) as unknown]))),
    saveProfileState: (profileId, state) =>
      perform(() => {
        profileStates.set(profileId, JSON.stringify(state));
      }),

    close: () => {
      // Closing twice is harmless; everything else rejects once closed.
      closed = true;
      return Promise.resolve();
    },
  };
}
