import type { Perform } from './perform.js';
import type { SessionRecord, SessionStore } from '../contract/session-store.js';

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

/** The session store of the memory ledger, and what its recovery reads of it. */
export interface MemorySessions {
  readonly methods: SessionStore;
  /** The session's record (synchronous: `loadSession` runs it inside its work). */
  recordOf(sessionKey: string): SessionRecord | undefined;
}

function toStored(record: SessionRecord): StoredSession {
  return {
    sessionKey: record.sessionKey,
    override: structuredClone(record.override),
    snapshotJson: record.snapshot === undefined ? undefined : JSON.stringify(record.snapshot),
    epoch: record.epoch,
    lastSeq: record.lastSeq,
    updatedAt: record.updatedAt,
    toolPolicyJson: record.toolPolicy === undefined ? undefined : JSON.stringify(record.toolPolicy),
  };
}

function toSessionRecord(stored: StoredSession): SessionRecord {
  return {
    sessionKey: stored.sessionKey,
    override: stored.override,
    snapshot: stored.snapshotJson === undefined ? undefined : (JSON.parse(stored.snapshotJson) as unknown),
    epoch: stored.epoch,
    lastSeq: stored.lastSeq,
    updatedAt: stored.updatedAt,
    ...(stored.toolPolicyJson === undefined
      ? {}
      : { toolPolicy: JSON.parse(stored.toolPolicyJson) as unknown }),
  };
}

/** Keep sessions' records in memory, one per key. */
export function createMemorySessions(perform: Perform): MemorySessions {
  const sessions = new Map<string, StoredSession>();
  const recordOf = (sessionKey: string): SessionRecord | undefined => {
    const stored = sessions.get(sessionKey);
    return stored && toSessionRecord(stored);
  };
  return {
    recordOf,
    methods: {
      getSession: (sessionKey) => perform(() => recordOf(sessionKey)),
      putSession: (record) =>
        perform(() => {
          sessions.set(record.sessionKey, toStored(record));
        }),
      listSessions: () => perform(() => [...sessions.values()].map(toSessionRecord)),
      listSessionKeys: ({ after, limit }) =>
        perform(() =>
          [...sessions.keys()]
            .filter((key) => after === undefined || key > after)
            .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
            .slice(0, limit)
            .map((sessionKey) => ({ sessionKey, updatedAt: sessions.get(sessionKey)?.updatedAt ?? 0 })),
        ),
    },
  };
}
