import { RuntimeError } from '../core/index.js';
import type { RuntimeEvent } from '../core/index.js';
import type { Ledger, RunRecord } from '../ledger/index.js';
import type { PostgresLedger } from '../ledger/index.js';
import { leaseFence } from './session-owners.js';

/** The ledger a worker of a cluster uses: every write of a session goes through that session's fence. */
export interface ClusterLedger extends Ledger {
  /**
   * Write `sessionKey` under `epoch` and the lease of `workerId` from now on (this worker just claimed it): a write
   * is refused once another worker claimed the session, and no transaction commits after that lease ended.
   */
  hold(sessionKey: string, epoch: number, workerId: string): void;
  /** Stop writing `sessionKey`: later writes of it are refused `fenced` here, without a round trip. */
  release(sessionKey: string): void;
  /** Whether `sessionKey` is held under `epoch` (not released since). */
  holds(sessionKey: string, epoch: number): boolean;
}

/**
 * What the cluster ledger wraps. The other workers learn of its events from the ring each transaction that
 * appends them sends with its COMMIT (the fence's `eventsWritten`, see session-owners.ts).
 */
export interface ClusterLedgerDeps {
  readonly ledger: PostgresLedger;
}

/** Consecutive events of one session, in order (events of different sessions are never reordered). */
function runsOf(events: readonly RuntimeEvent[]): RuntimeEvent[][] {
  const runs: RuntimeEvent[][] = [];
  for (const event of events) {
    const last = runs.at(-1);
    if (last !== undefined && last[0]?.sessionKey === event.sessionKey) last.push(event);
    else runs.push([event]);
  }
  return runs;
}

function notHeld(sessionKey: string): RuntimeError {
  return new RuntimeError('fenced', `session "${sessionKey}" is not held by this worker`, {
    details: { sessionKey },
  });
}

/** Which session each run belongs to, learned from the runs this worker opened or read. */
function createRunIndex(ledger: PostgresLedger) {
  const runSessions = new Map<string, string>();
  const learn = <T extends RunRecord | undefined>(run: T): T => {
    if (run !== undefined) runSessions.set(run.runId, run.sessionKey);
    return run;
  };
  const learnAll = (runs: RunRecord[]): RunRecord[] => {
    for (const run of runs) learn(run);
    return runs;
  };
  /** The run's session, read from the ledger when this worker has not seen the run yet. */
  const sessionOf = (runId: string): string | Promise<string | undefined> =>
    runSessions.get(runId) ?? ledger.getRun(runId).then((run) => learn(run)?.sessionKey);
  type Reads = 'getRun' | 'listRuns' | 'listOpenRuns' | 'listPausedRuns' | 'loadSession' | 'loadSessions';
  const reads: Pick<Ledger, Reads> = {
    getRun: (runId) => ledger.getRun(runId).then(learn),
    listRuns: (sessionKey) => ledger.listRuns(sessionKey).then(learnAll),
    listOpenRuns: () => ledger.listOpenRuns().then(learnAll),
    listPausedRuns: () => ledger.listPausedRuns().then(learnAll),
    loadSession: (sessionKey) =>
      ledger.loadSession(sessionKey).then((state) => {
        learn(state.paused?.run);
        return state;
      }),
    // A batch of hydrations learns the paused runs it read too (a later write to one needs no getRun).
    ...(ledger.loadSessions === undefined
      ? {}
      : { loadSessions: learnLoads((keys) => ledger.loadSessions?.(keys) ?? Promise.resolve([]), learn) }),
  };
  return { learn, sessionOf, reads };
}

/** `loadSessions`, learning the session of each paused run it read. */
function learnLoads(
  loadSessions: NonNullable<Ledger['loadSessions']>,
  learn: (run: RunRecord | undefined) => unknown,
): NonNullable<Ledger['loadSessions']> {
  return (sessionKeys) =>
    loadSessions(sessionKeys).then((loads) => {
      for (const load of loads) if ('state' in load) learn(load.state.paused?.run);
      return loads;
    });
}

/** The writes of a session, each on that session's view (`withRun`: the view of the run's session). */
function sessionWrites(
  ledger: Ledger,
  view: (sessionKey: string) => Ledger,
  withRun: <T>(runId: string, call: (target: Ledger) => Promise<T>) => Promise<T>,
  learn: (run: RunRecord) => RunRecord,
): Partial<Ledger> {
  return {
    putSession: (record) => view(record.sessionKey).putSession(record),
    appendMessage: (record) => view(record.sessionKey).appendMessage(record),
    updateMessages: (sessionKey, ids, update) => view(sessionKey).updateMessages(sessionKey, ids, update),
    openRun: (record) => view(learn(record).sessionKey).openRun(record),
    closeRun: (runId, close, options) => withRun(runId, (target) => target.closeRun(runId, close, options)),
    setRunStatus: (runId, status, progress) =>
      withRun(runId, (target) => target.setRunStatus(runId, status, progress)),
    appendTurns: (records) =>
      records[0] === undefined
        ? ledger.appendTurns(records)
        : view(records[0].sessionKey).appendTurns(records),
    putToolCalls: (records) =>
      records[0] === undefined
        ? ledger.putToolCalls(records)
        : view(records[0].sessionKey).putToolCalls(records),
    updateToolCall: (key, update) => withRun(key.runId, (target) => target.updateToolCall(key, update)),
    appendCompensation: (record) => view(record.sessionKey).appendCompensation(record),
    updateCompensation: (runId, seq, update) =>
      withRun(runId, (target) => target.updateCompensation(runId, seq, update)),
    putPlan: (record) => view(record.sessionKey).putPlan(record),
    approvePlanSteps: (runId, stepIds) => withRun(runId, (target) => target.approvePlanSteps(runId, stepIds)),
    putStepResult: (record) => withRun(record.runId, (target) => target.putStepResult(record)),
  };
}

/**
 * Wrap the Postgres ledger for one worker: a session's writes go to the ledger's view fenced by the epoch this
 * worker claimed (refused `fenced` in SQL once another worker claimed it since); writes of a session this worker
 * does not hold are refused at once. Writes named by run id find their session through the runs this worker
 * opened or read. Reads, and what belongs to no session (consumers, deliveries, auth profiles), pass through.
 */
export function createClusterLedger(deps: ClusterLedgerDeps): ClusterLedger {
  const { ledger } = deps;
  const views = new Map<string, Ledger>();
  const epochs = new Map<string, number>();
  const runs = createRunIndex(ledger);
  const refusing = (sessionKey: string): Ledger => {
    const refuse = (): Promise<never> => Promise.reject(notHeld(sessionKey));
    return new Proxy(ledger, { get: () => refuse });
  };
  const view = (sessionKey: string): Ledger => views.get(sessionKey) ?? refusing(sessionKey);
  /** The write on the run's session's view: at once when the run is known (so it joins its stretch's batch). */
  const withRun = <T>(runId: string, call: (target: Ledger) => Promise<T>): Promise<T> => {
    const session = runs.sessionOf(runId);
    if (typeof session === 'string') return call(view(session));
    return session.then((key) => call(key === undefined ? ledger : view(key)));
  };
  return {
    ...ledger,
    ...runs.reads,
    ...sessionWrites(ledger, view, withRun, runs.learn),
    hold(sessionKey, epoch, workerId) {
      views.set(sessionKey, ledger.fenced({ sessionKey, epoch, lease: leaseFence(workerId) }));
      epochs.set(sessionKey, epoch);
    },
    release(sessionKey) {
      views.delete(sessionKey);
      epochs.delete(sessionKey);
    },
    holds: (sessionKey, epoch) => epochs.get(sessionKey) === epoch,
    // Each session's events on its fenced view, queued at once: they join the transaction of the writes called
    // beside them (a run's closed row and its run.ended) and are numbered after the log's end in it.
    appendEvents: (events) =>
      Promise.all(runsOf(events).map((run) => view(run[0]?.sessionKey ?? '').appendEvents(run))).then(
        () => undefined,
      ),
    // A held session's transcript from its view: the owner answers its latest turns from memory (the ledger's
    // own read goes to the database, since another worker may write a session this one does not hold).
    listTurns: (sessionKey, options) => (views.get(sessionKey) ?? ledger).listTurns(sessionKey, options),
    // The ledger is the runtime's to close; the views share its connection.
    close: () => ledger.close(),
  };
}
