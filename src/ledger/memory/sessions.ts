import type { Perform } from './perform.js';
import type { SessionRecord, SessionStore } from '../contract/session-store.js';
import { compactSession, expandSession, updatedAtOf } from './compact-session.js';

/** The session store of the memory ledger, and what its recovery reads of it. */
export interface MemorySessions {
  readonly methods: SessionStore;
  /** The session's record (synchronous: `loadSession` runs it inside its work). */
  recordOf(sessionKey: string): SessionRecord | undefined;
}

/** Keep sessions' records in memory, one per key, each as one compact string (`compactSession`). */
export function createMemorySessions(perform: Perform): MemorySessions {
  const sessions = new Map<string, string>();
  const recordOf = (sessionKey: string): SessionRecord | undefined => {
    const stored = sessions.get(sessionKey);
    return stored === undefined ? undefined : expandSession(sessionKey, stored);
  };
  return {
    recordOf,
    methods: {
      getSession: (sessionKey) => perform(() => recordOf(sessionKey)),
      putSession: (record) =>
        perform(() => {
          sessions.set(record.sessionKey, compactSession(record));
        }),
      listSessions: () => perform(() => [...sessions].map(([key, stored]) => expandSession(key, stored))),
      listSessionKeys: ({ after, limit }) =>
        perform(() =>
          [...sessions.keys()]
            .filter((key) => after === undefined || key > after)
            .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
            .slice(0, limit)
            .map((sessionKey) => {
              const stored = sessions.get(sessionKey);
              return { sessionKey, updatedAt: stored === undefined ? 0 : updatedAtOf(stored) };
            }),
        ),
    },
  };
}
