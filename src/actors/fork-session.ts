import { RuntimeError } from '../core/index.js';
import { runStatuses, type RunStatus } from '../core/index.js';
import type { Ledger, RunRecord, TranscriptFork, TurnRecord } from '../ledger/index.js';
import { parseSessionKey } from './inbound-message.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';

/** Options of `runtime.fork`: the parent's run the fork is taken after (default: its last ended run). */
export interface ForkOptions {
  readonly upToRunId?: string;
}

const ended = new Set<string>(runStatuses);

function isEnded(run: RunRecord): run is RunRecord & { status: RunStatus } {
  return ended.has(run.status);
}

/** Check the fork's arguments: two different valid keys, and `upToRunId` a string when given. */
function parseFork(parentKey: unknown, childKey: unknown, options: unknown): [string, string, ForkOptions] {
  const parent = parseSessionKey(parentKey);
  const child = parseSessionKey(childKey);
  if (parent === child)
    throw new RuntimeError('invalid_input', 'fork: the child key must differ from the parent key');
  if (options === null || typeof options !== 'object') {
    throw new RuntimeError('invalid_input', 'fork: options must be an object');
  }
  const { upToRunId } = options as { upToRunId?: unknown };
  if (upToRunId !== undefined && (typeof upToRunId !== 'string' || upToRunId === '')) {
    throw new RuntimeError('invalid_input', 'fork: upToRunId must be a run id');
  }
  return [parent, child, upToRunId === undefined ? {} : { upToRunId }];
}

/** Whether the ledger (or the registry) knows anything of a session: a record, events, messages, turns, runs. */
async function sessionExists(internals: RuntimeInternals, key: string): Promise<boolean> {
  if (internals.registry.live(key) !== undefined) return true;
  const { ledger } = internals.services;
  const state = await ledger.loadSession(key);
  if (state.record !== undefined || state.lastSeq > 0 || state.lastOrder > 0) return true;
  if ((await ledger.getFork(key)) !== undefined) return true;
  if ((await ledger.listTurns(key, { last: 1 })).length > 0) return true;
  return (await ledger.listRuns(key)).length > 0;
}

/** The parent's run the fork is taken after: the one named (it must have ended) or the last that ended. */
function forkPoint(runs: readonly RunRecord[], upToRunId: string | undefined): number {
  if (upToRunId === undefined) return runs.findLastIndex(isEnded);
  const index = runs.findIndex((run) => run.runId === upToRunId);
  const run = runs[index];
  if (run === undefined)
    throw new RuntimeError('invalid_input', `fork: ${upToRunId} is not a run of the parent`);
  if (!isEnded(run)) throw new RuntimeError('invalid_input', `fork: run ${upToRunId} has not ended`);
  return index;
}

/**
 * How many of the parent's turns the fork inherits: everything up to and including the chosen run's turns (the
 * parent's own inherited part too), never a turn of a run still open or started after it.
 */
function inheritedTurns(turns: readonly TurnRecord[], runs: readonly RunRecord[], point: number): number {
  const excluded = new Set(
    runs.filter((run, index) => index > point || !isEnded(run)).map((run) => run.runId),
  );
  for (let index = turns.length - 1; index >= 0; index--) {
    if (!excluded.has((turns[index] as TurnRecord).runId)) return index + 1;
  }
  return 0;
}

/** Work out and record the fork of `parent` as `child`; the record is one row whatever the parent's length. */
async function recordFork(ledger: Ledger, parent: string, child: string, at: number, options: ForkOptions) {
  const runs = await ledger.listRuns(parent);
  const point = forkPoint(runs, options.upToRunId);
  const turns = inheritedTurns(await ledger.listTurns(parent), runs, point);
  const upToRunId = runs[point]?.runId;
  const fork: TranscriptFork = {
    sessionKey: child,
    parentKey: parent,
    turns,
    ...(upToRunId === undefined ? {} : { upToRunId }),
    at,
  };
  await ledger.forkTranscript(fork);
  return fork;
}

/**
 * Create `childKey` as a fork of `parentKey`: its transcript starts as the parent's up to the fork point (stored by
 * reference), without the parent's queue, pauses or dedupe window. Unknown parent: `not_found`; a child key already
 * in use: `invalid_input`; nothing is written either way.
 */
export async function forkSession(
  internals: RuntimeInternals,
  parentKey: unknown,
  childKey: unknown,
  options: unknown = {},
): Promise<TranscriptFork> {
  assertOpen(internals);
  const [parent, child, parsed] = parseFork(parentKey, childKey, options);
  await internals.ready;
  if (!(await sessionExists(internals, parent))) {
    throw new RuntimeError('not_found', `fork: no session ${parent}`);
  }
  if (await sessionExists(internals, child)) {
    throw new RuntimeError('invalid_input', `fork: session ${child} already exists`);
  }
  const { ledger, clock } = internals.services;
  return recordFork(ledger, parent, child, clock.now(), parsed);
}
