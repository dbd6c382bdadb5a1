import type { Clock } from '../core/index.js';
import type { EventInput, RuntimeEvent } from '../core/index.js';
import type { Ledger, RunRecord } from '../ledger/index.js';

const crashError = { code: 'internal', message: 'the process stopped while the run was active' } as const;

/** A session's event numbering, advanced by each event emitted on it. */
export interface SessionNumbering {
  readonly key: string;
  lastSeq: number;
}

/** Where the crash record's events go: the runtime's event bus. */
export interface CrashEventSink {
  /** Stamp, record and deliver an event on a session that is not live. */
  emit(session: SessionNumbering, event: EventInput): unknown;
  /** Resolves once every event emitted so far is delivered. */
  flushed(): Promise<void>;
}

/** What writing the crash record needs. */
export interface CrashRecordDeps {
  readonly ledger: Ledger;
  readonly clock: Clock;
  readonly events: CrashEventSink;
  readonly onError: (error: unknown) => void;
}

/** What becomes of the runs a crash (or a worker's death) left `running`. */
export interface RecoveryPolicy {
  /** `resume`: they go on from their last durable boundary; `close`: they are closed `crashed`. */
  readonly crashedRuns: 'resume' | 'close';
  /** Resumes one run may have (across restarts); past them it is closed `crashed`. */
  readonly maxResumes: number;
  /** A run started longer ago than this is closed `crashed` instead of resumed. */
  readonly maxAgeMs: number;
}

/** Resume by default, at most twice a run, runs younger than a day. */
export const defaultRecoveryPolicy: RecoveryPolicy = {
  crashedRuns: 'resume',
  maxResumes: 2,
  maxAgeMs: 86_400_000,
};

/** What recovery did with the open runs: the sessions it touched, and the runs that resume (their sessions hold them). */
export interface OpenRunsRecovered {
  readonly sessions: string[];
  readonly resumed: RunRecord[];
}

/** The run's resumes so far: its `run.resumed` events that followed a crash or a takeover (durable, so counted). */
function resumesOf(events: readonly RuntimeEvent[], runId: string): number {
  return events.filter(
    (event) => event.type === 'run.resumed' && event.runId === runId && event.reason !== undefined,
  ).length;
}

/**
 * Recover the runs a crash left open: each resumes (a `run.resumed` with its attempt, durable before anything of
 * the resume happens, so the budget holds across repeated crashes), or, with `close`, past its resumes or its age,
 * is closed `crashed` with the text it had streamed and a `run.ended`, in one synchronous stretch so they commit
 * together (a crash meanwhile leaves the run open for the next start). What cannot be read is reported and skipped.
 */
export async function recoverOpenRuns(
  deps: CrashRecordDeps,
  options: {
    readonly policy: RecoveryPolicy;
    readonly reason: 'crash' | 'takeover';
    /** Only the runs of these sessions (a cluster worker taking over some sessions). @default every session */
    readonly only?: ReadonlySet<string> | undefined;
    /** Plan runs resume too (the caller runs them on); otherwise they are closed `crashed`. @default false */
    readonly resumePlans?: boolean;
  },
): Promise<OpenRunsRecovered> {
  const { ledger, onError } = deps;
  const { only } = options;
  const listed = await ledger.listOpenRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  const open = only === undefined ? listed : listed.filter((run) => only.has(run.sessionKey));
  const sessions = new Map<string, SessionNumbering>();
  const resumed: RunRecord[] = [];
  for (const run of open) {
    try {
      let numbering = sessions.get(run.sessionKey);
      if (numbering === undefined) {
        numbering = { key: run.sessionKey, lastSeq: (await ledger.loadSession(run.sessionKey)).lastSeq };
        sessions.set(run.sessionKey, numbering);
      }
      if (await resumeRun(deps, run, numbering, options)) resumed.push(run);
      else await closeCrashed(deps, run, await ledger.runText(run.runId), numbering);
    } catch (error) {
      onError(error);
    }
  }
  await deps.events.flushed();
  return { sessions: [...sessions.keys()], resumed };
}

/** Resume the run when the policy lets it: its `run.resumed` is recorded; false when it must be closed instead. */
async function resumeRun(
  deps: CrashRecordDeps,
  run: RunRecord,
  numbering: SessionNumbering,
  options: {
    readonly policy: RecoveryPolicy;
    readonly reason: 'crash' | 'takeover';
    readonly resumePlans?: boolean;
  },
): Promise<boolean> {
  const { policy, reason } = options;
  if (policy.crashedRuns === 'close' || policy.maxResumes <= 0) return false;
  // A plan run resumes only where its caller runs it on (startup recovery and a cluster takeover do).
  if (run.provider === 'plan' && options.resumePlans !== true) return false;
  if (deps.clock.now() - run.startedAt > policy.maxAgeMs) return false;
  const events = await deps.ledger.readEvents({ sessionKey: run.sessionKey });
  const attempt = resumesOf(events, run.runId) + 1;
  if (attempt > policy.maxResumes) return false;
  // Durable before the run does anything again (recoverOpenRuns waits for every run's at once).
  deps.events.emit(numbering, { type: 'run.resumed', runId: run.runId, attempt, reason });
  return true;
}

/** Close every run a crash left open as `crashed` (see `recoverOpenRuns`). Returns their sessions. */
export async function closeCrashedRuns(
  deps: CrashRecordDeps,
  /** Only the runs of these sessions. @default every session */
  only?: ReadonlySet<string>,
): Promise<string[]> {
  const policy = { ...defaultRecoveryPolicy, crashedRuns: 'close' } as const;
  return (await recoverOpenRuns(deps, { policy, reason: 'crash', only })).sessions;
}

/** Close one crashed run and emit its `run.ended` in one synchronous stretch, then wait for both. */
async function closeCrashed(
  deps: CrashRecordDeps,
  run: RunRecord,
  text: string,
  numbering: SessionNumbering,
): Promise<void> {
  const { ledger, clock, events } = deps;
  const endedAt = clock.now();
  const { runId, usage } = run;
  const closed = ledger.closeRun(runId, { status: 'crashed', endedAt, text, usage, error: crashError });
  const durationMs = endedAt - run.startedAt;
  events.emit(numbering, {
    type: 'run.ended',
    runId,
    status: 'crashed',
    text,
    usage,
    durationMs,
    error: crashError,
  });
  await closed;
  await events.flushed();
}
