import type { TranscriptFork, TurnRecord } from '../contract/transcript-store.js';

/** What the cache holds of one session: whether it is a fork, and its latest own turns (all of them: `whole`). */
interface Tail {
  readonly fork: TranscriptFork | undefined;
  turns: TurnRecord[];
  whole: boolean;
}

/** The latest turns kept per session: a run reads `historyTurns` (50 by default) and its own. */
const turnsPerSession = 64;
/** Turns kept in all: the least recently used sessions are dropped past it. */
const turnsInAll = 131_072;

/**
 * A write-through cache of each session's latest turns and fork, so that a run's start reads neither from the file
 * (the SQLite ledger is the file's one writer). Filled by the reads it could not answer, kept up by the appends;
 * bounded per session and in all (least recently used sessions go first). A forked session is never answered from
 * it (its transcript starts in its parent's).
 */
export interface TurnCache {
  /** The fork of a session the cache knows (undefined: not a fork), or 'unknown'. */
  fork(sessionKey: string): TranscriptFork | undefined | 'unknown';
  /** The latest `last` turns (all with `last` undefined) of a session that is not a fork, if the cache has them. */
  turns(sessionKey: string, last: number | undefined): TurnRecord[] | undefined;
  /** What a read of the file found: a session's fork and its latest own turns (all when `whole`). */
  learn(
    sessionKey: string,
    fork: TranscriptFork | undefined,
    turns: readonly TurnRecord[],
    whole: boolean,
  ): void;
  /** Turns appended (in the open transaction). */
  appended(record: TurnRecord): void;
  /** A fork recorded (in the open transaction): the session has no turns of its own yet. */
  forked(fork: TranscriptFork): void;
  clear(): void;
}

/** Create an empty cache. */
export function createTurnCache(): TurnCache {
  const tails = new Map<string, Tail>();
  let held = 0;
  const touch = (sessionKey: string): Tail | undefined => {
    const tail = tails.get(sessionKey);
    if (tail === undefined) return undefined;
    tails.delete(sessionKey);
    tails.set(sessionKey, tail);
    return tail;
  };
  const trim = (tail: Tail): void => {
    const over = tail.turns.length - turnsPerSession;
    if (over > 0) {
      tail.turns = tail.turns.slice(over);
      tail.whole = false;
      held -= over;
    }
    for (const [key, oldest] of tails) {
      if (held <= turnsInAll) break;
      tails.delete(key);
      held -= oldest.turns.length;
    }
  };
  const put = (sessionKey: string, tail: Tail): void => {
    held -= tails.get(sessionKey)?.turns.length ?? 0;
    tails.delete(sessionKey);
    tails.set(sessionKey, tail);
    held += tail.turns.length;
    trim(tail);
  };
  return {
    fork: (sessionKey) => {
      const tail = touch(sessionKey);
      return tail === undefined ? 'unknown' : tail.fork;
    },
    turns: (sessionKey, last) => {
      const tail = touch(sessionKey);
      if (tail === undefined || tail.fork !== undefined) return undefined;
      if (last === undefined) return tail.whole ? [...tail.turns] : undefined;
      if (!tail.whole && tail.turns.length < last) return undefined;
      return tail.turns.slice(Math.max(0, tail.turns.length - last));
    },
    learn: (sessionKey, fork, turns, whole) =>
      put(sessionKey, { fork, turns: fork === undefined ? [...turns] : [], whole }),
    appended: (record) => {
      const tail = tails.get(record.sessionKey);
      if (tail === undefined || tail.fork !== undefined) return;
      tail.turns.push(record);
      held += 1;
      trim(tail);
    },
    forked: (fork) => put(fork.sessionKey, { fork, turns: [], whole: true }),
    clear: () => {
      tails.clear();
      held = 0;
    },
  };
}
