import type { Clock } from '../core/clock.js';
import type { EventInput } from '../core/events.js';
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

/**
 * Close every run a crash left open as `crashed`, with the text it had streamed and a `run.ended` event, written
 * in one synchronous stretch so they commit together (a crash meanwhile leaves the run open for the next start,
 * never closed without its event). Returns their sessions; what cannot be read is reported and skipped.
 */
export async function closeCrashedRuns(
  deps: CrashRecordDeps,
  /** Only the runs of these sessions (a cluster worker taking over some sessions). @default every session */
  only?: ReadonlySet<string>,
): Promise<string[]> {
  const { ledger, onError } = deps;
  const listed = await ledger.listOpenRuns().catch((error: unknown) => {
    onError(error);
    return [] as RunRecord[];
  });
  const open = only === undefined ? listed : listed.filter((run) => only.has(run.sessionKey));
  const sessions = new Map<string, SessionNumbering>();
  for (const run of open) {
    try {
      let numbering = sessions.get(run.sessionKey);
      const text = await ledger.runText(run.runId);
      if (numbering === undefined) {
        numbering = { key: run.sessionKey, lastSeq: (await ledger.loadSession(run.sessionKey)).lastSeq };
        sessions.set(run.sessionKey, numbering);
      }
      await closeCrashed(deps, run, text, numbering);
    } catch (error) {
      onError(error);
    }
  }
  return [...sessions.keys()];
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
