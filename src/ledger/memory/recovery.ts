import { admittedMessageIds, stillToRun } from '../../policies/index.js';
import type { InboxRecord } from '../contract/inbox-store.js';
import type { MemoryEvents } from './events.js';
import type { MemoryInbox } from './inbox.js';
import type { Perform } from './perform.js';
import type { MemoryRuns } from './runs.js';
import type { MemorySessions } from './sessions.js';
import type { MemoryTranscript } from './transcript.js';
import { recentLimit, type RecoveryStore, type SessionState } from '../contract/recovery-store.js';

/** The memory stores a restart reads across. */
export interface MemoryRecoverySources {
  readonly sessions: MemorySessions;
  readonly inbox: MemoryInbox;
  readonly transcript: MemoryTranscript;
  readonly runs: MemoryRuns;
  readonly events: MemoryEvents;
}

/** What a restart reads of the memory ledger; which messages are still to run is the `stillToRun` policy's. */
export function createMemoryRecovery(perform: Perform, sources: MemoryRecoverySources): RecoveryStore {
  const { sessions, inbox, transcript, runs, events } = sources;
  const toRunOf = (sessionKey: string, records: readonly InboxRecord[]): InboxRecord[] =>
    stillToRun(records, () => admittedMessageIds(transcript.turnsOf(sessionKey)));

  const stateOf = (sessionKey: string): SessionState => {
    const records = inbox.recordsOf(sessionKey);
    const paused = runs.pausedOf(sessionKey);
    return {
      record: sessions.recordOf(sessionKey),
      lastSeq: events.lastSeqOf(sessionKey),
      // The inbox is kept in order, so its last record holds the highest order.
      lastOrder: records.at(-1)?.order ?? 0,
      pending: toRunOf(sessionKey, records),
      recent: records.slice(-recentLimit).map((record) => [record.messageId, record.acceptedAt] as const),
      ...(paused === undefined ? {} : { paused }),
    };
  };

  return {
    loadSession: (sessionKey) => perform(() => stateOf(sessionKey)),
    // Nothing to gather in memory: each key is read as `loadSession` reads it, all in one call.
    loadSessions: (sessionKeys) =>
      perform(() => sessionKeys.map((sessionKey) => ({ sessionKey, state: stateOf(sessionKey) }))),

    listSessionsWithPending: () =>
      perform(() => {
        const keys: string[] = [];
        for (const [key, { records }] of inbox.inboxes())
          if (toRunOf(key, records).length > 0) keys.push(key);
        return keys;
      }),

    runText: (runId) =>
      perform(() => {
        let text = '';
        for (const event of events.all()) {
          if (event.type === 'assistant.delta' && event.runId === runId) text += event.delta;
        }
        return text;
      }),
  };
}
