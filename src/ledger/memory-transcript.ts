import type { Perform } from './memory-perform.js';
import type { TranscriptStore, TurnRecord } from './transcript-store.js';

/** The transcript store of the memory ledger, and what its recovery reads of it. */
export interface MemoryTranscript {
  readonly methods: TranscriptStore;
  /** A session's turns in recorded order (not a copy: read only). */
  turnsOf(sessionKey: string): readonly TurnRecord[];
}

/** A copy of a turn that the caller cannot change the ledger through. */
function copyTurn(record: TurnRecord): TurnRecord {
  // Tool-call args are arbitrary data, so only turns that carry them pay for a deep copy.
  if (record.toolCalls) return structuredClone(record);
  return record.messageIds ? { ...record, messageIds: [...record.messageIds] } : { ...record };
}

/** Append `value` to the list `map` holds for `key`, made the first time. */
function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Keep transcripts in memory, by session and by run (the same copies in both). */
export function createMemoryTranscript(perform: Perform): MemoryTranscript {
  const turns = new Map<string, TurnRecord[]>();
  const turnsByRun = new Map<string, TurnRecord[]>();
  return {
    turnsOf: (sessionKey) => turns.get(sessionKey) ?? [],
    methods: {
      appendTurns: (records) =>
        perform(() => {
          for (const record of records) {
            const copy = copyTurn(record);
            push(turns, record.sessionKey, copy);
            push(turnsByRun, record.runId, copy);
          }
        }),
      listTurns: (sessionKey, options) =>
        perform(() => {
          const all = turns.get(sessionKey) ?? [];
          const last = options?.last;
          return last === undefined ? all.slice() : last <= 0 ? [] : all.slice(-last);
        }),
      listRunTurns: (runId) => perform(() => (turnsByRun.get(runId) ?? []).slice()),
    },
  };
}
