import type { TranscriptFork, TurnRecord } from './transcript-store.js';

/** A stretch of a transcript made of one session's own turns: its first `limit` (all of them when undefined). */
export interface OwnTurns {
  readonly sessionKey: string;
  readonly limit: number | undefined;
}

/**
 * The stretches of own turns a session's transcript is made of, oldest first: a fork's inherited part resolved
 * through its parents (a fork of a fork too), then the session's own. `count` keeps only the first `count` turns.
 */
export function transcriptStretches(
  sessionKey: string,
  forkOf: (sessionKey: string) => TranscriptFork | undefined,
  count?: number,
): OwnTurns[] {
  const stretches: OwnTurns[] = [];
  const seen = new Set<string>();
  let key = sessionKey;
  let limit = count;
  // A fork's parent existed before the fork, so the chain has no cycle; `seen` guards against a corrupt one.
  while (!seen.has(key)) {
    seen.add(key);
    const fork = forkOf(key);
    if (fork === undefined) {
      stretches.push({ sessionKey: key, limit });
      break;
    }
    if (limit === undefined || limit > fork.turns) {
      stretches.push({ sessionKey: key, limit: limit === undefined ? undefined : limit - fork.turns });
      limit = fork.turns;
    }
    key = fork.parentKey;
  }
  return stretches.reverse();
}

/**
 * Read a transcript made of `stretches`: all of it, or its latest `last` turns. `own` reads one stretch (with
 * `last`, only that many of its latest turns), so a long inherited part is read only as far as needed.
 */
export function readStretches(
  stretches: readonly OwnTurns[],
  own: (stretch: OwnTurns, last: number | undefined) => TurnRecord[],
  last?: number,
): TurnRecord[] {
  if (last === undefined) return stretches.flatMap((stretch) => own(stretch, undefined));
  const parts: TurnRecord[][] = [];
  let remaining = last;
  for (let index = stretches.length - 1; index >= 0 && remaining > 0; index--) {
    const part = own(stretches[index] as OwnTurns, remaining);
    parts.unshift(part);
    remaining -= part.length;
  }
  return parts.flat();
}

/** A `session_forks` row, as both SQL ledgers return it. */
export interface ForkRow {
  readonly session_key: string;
  readonly parent_key: string;
  readonly turns: number;
  readonly up_to_run_id: string | null;
  readonly at: number;
}

/** The fork a `session_forks` row records. */
export function toFork(row: ForkRow): TranscriptFork {
  return {
    sessionKey: row.session_key,
    parentKey: row.parent_key,
    turns: row.turns,
    ...(row.up_to_run_id === null ? {} : { upToRunId: row.up_to_run_id }),
    at: row.at,
  };
}
