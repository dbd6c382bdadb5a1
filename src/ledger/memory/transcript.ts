import { RuntimeError } from '../../core/index.js';
import type { Perform } from './perform.js';
import { readStretches, transcriptStretches, type OwnTurns } from '../contract/transcript-forks.js';
import type { TranscriptFork, TranscriptStore, TurnRecord } from '../contract/transcript-store.js';

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

/** A stretch of a session's own turns (its latest `last` of them when given). */
function ownStretch(
  turns: Map<string, TurnRecord[]>,
  stretch: OwnTurns,
  last: number | undefined,
): TurnRecord[] {
  const all = turns.get(stretch.sessionKey) ?? [];
  const upTo = stretch.limit === undefined ? all.length : Math.min(stretch.limit, all.length);
  return all.slice(last === undefined ? 0 : Math.max(0, upTo - last), upTo);
}

/** Record a fork unless the session already is one or has turns of its own. */
function addFork(
  forks: Map<string, TranscriptFork>,
  turns: Map<string, TurnRecord[]>,
  fork: TranscriptFork,
): void {
  if (forks.has(fork.sessionKey) || turns.has(fork.sessionKey)) {
    throw new RuntimeError('invalid_input', `fork: session ${fork.sessionKey} already has a transcript`);
  }
  forks.set(fork.sessionKey, { ...fork });
}

/** Keep transcripts in memory, by session and by run (the same copies in both), and forks by reference. */
export function createMemoryTranscript(perform: Perform): MemoryTranscript {
  const turns = new Map<string, TurnRecord[]>();
  const turnsByRun = new Map<string, TurnRecord[]>();
  const forks = new Map<string, TranscriptFork>();
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
          const last = options?.last;
          if (last !== undefined && last <= 0) return [];
          const stretches = transcriptStretches(sessionKey, (key) => forks.get(key));
          return readStretches(stretches, (stretch, n) => ownStretch(turns, stretch, n), last);
        }),
      listRunTurns: (runId) => perform(() => (turnsByRun.get(runId) ?? []).slice()),
      forkTranscript: (fork) => perform(() => addFork(forks, turns, fork)),
      getFork: (sessionKey) =>
        perform(() => {
          const fork = forks.get(sessionKey);
          return fork && { ...fork };
        }),
    },
  };
}
