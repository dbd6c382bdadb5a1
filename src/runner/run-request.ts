import type {
  InlineAttachment,
  PauseState,
  ErrorInfo,
  RunStatus,
  EventInput,
  StoredPart,
} from '../core/index.js';
import type { AbortStatus } from './execute-run.js';
import type { RunPhase } from './run-context.js';

/** What a session machine runs: an agent run (messages to the model), a plan run, or an undo. */
export const runKinds = ['agent', 'plan', 'undo'] as const;
/** A kind of run the session machine owns. */
export type RunKind = (typeof runKinds)[number];

/** The run a session machine hands out to execute: its messages, its prompt, and where it stands. */
export interface RunTicket {
  readonly runId: string;
  /** What runs. @default 'agent' */
  readonly kind?: RunKind;
  /** A plan run's or an undo's job (`RunJobs`), the work its caller handed the session. */
  readonly job?: string;
  readonly prompt: string;
  /** The inline attachments of its messages, in message order, after the prompt's text. */
  readonly attachments?: readonly InlineAttachment[];
  readonly messageIds: readonly string[];
  /** `collected` when several collect-mode messages were merged into this run. */
  readonly consumedAs: 'consumed' | 'collected';
  readonly startedAt: number;
  /** The session's preferred auth profile when the run started. */
  readonly preferredProfile?: string;
  /** Set when the run continues after a pause (with `abort`, it only ends). */
  readonly resume?: {
    readonly from: PauseState;
    readonly abort?: { readonly status: AbortStatus; readonly reason: string };
  };
}

/** What the session side hands the run lifecycle to execute one run. */
export interface RunRequest {
  readonly sessionKey: string;
  readonly run: RunTicket;
  readonly signal: AbortSignal;
  readonly steering: SteerInbox;
  /** Abort the run's own controller (the run timeout; a ledger that cannot record the run). */
  readonly abort: (status: AbortStatus, reason: string) => void;
}

/**
 * Executes a run; resolves with its end or pause, not written yet (`RunEnding`, `RunPausing`: the session side
 * writes it where its machine adopts it), or with a result that has nothing left to write (a plan run's or an undo's
 * stop, a run whose ledger faulted), or rejects when it could not start (then its messages go back to the queue).
 */
export type ExecuteRun = (request: RunRequest, port: RunPort) => Promise<ExecutedRun>;

/**
 * A run's end, decided and not written yet. The session side writes it (`close`) in the synchronous stretch in which
 * its machine adopts `summary`, so that when the bus delivers `run.ended` (once it is durable) the machine already
 * shows the end.
 */
export interface RunEnding {
  /** The end the machine adopts: what the ledger holds once `close` committed. */
  readonly summary: RunSummary;
  /**
   * Write the end now, in this synchronous stretch: the run's row closed and `run.ended` emitted (one group-commit
   * transaction). A commit that fails is written once more as `failed` (`ledger_unavailable`, saying why), and
   * `corrected` is told that end in the stretch that writes it; a run whose ledger faulted writes nothing and is told
   * its `crashed` end once the ledger healed. Resolves with the end the ledger holds, once its `run.ended` was
   * delivered to the subscribers (or its write failed).
   */
  close(corrected: (summary: RunSummary) => void): Promise<RunSummary>;
}

/** A run's pause, decided and not written yet: the session side records it where its machine adopts `paused`. */
export interface RunPausing {
  readonly paused: RunPaused;
  /**
   * Record the pause now, in this synchronous stretch: its calls, the run's status and the events announcing it.
   * Resolves once those events were delivered to the subscribers (or their writes failed).
   */
  record(): Promise<void>;
}

/** What executing a run resolves with: its end or pause to write, or a result with nothing left to write. */
export type ExecutedRun = RunResult | RunEnding | RunPausing;

/** True when the run's end is still to be written. */
export function isRunEnding(executed: ExecutedRun): executed is RunEnding {
  return 'close' in executed;
}

/** True when the run's pause is still to be recorded. */
export function isRunPausing(executed: ExecutedRun): executed is RunPausing {
  return 'record' in executed;
}

/** How a run ended, as `waitForEnd()` and `run.ended` report it. */
export interface RunSummary {
  readonly runId: string;
  readonly status: RunStatus;
  readonly error?: ErrorInfo;
  /** All assistant text of the run (the partial output when it did not complete). */
  readonly text: string;
  readonly messageIds: readonly string[];
  readonly startedAt: number;
  readonly endedAt: number;
}

/** A call of a paused run that waits: for an operator (`approval`) or for a result from outside (`deferred`). */
export interface PausedCallInfo {
  readonly toolCallId: string;
  /** The request the call waits on (`approvalIdOf`; absent in snapshots from before requests had ids: the call's id). */
  readonly approvalId?: string;
  readonly tool: string;
  readonly needs: 'approval' | 'deferred';
  /** A call in doubt after a crash: approved it runs again, rejected the model hears its outcome is unknown, or
   * its outcome can be supplied. */
  readonly inDoubt?: boolean;
  /** Where the call is recorded: the run's tool turn and the call's position in it. */
  readonly turn: number;
  readonly position: number;
}

/** A run that paused instead of ending: why, and the calls it waits for. */
export interface RunPaused {
  readonly runId: string;
  readonly state: PauseState;
  readonly calls: readonly PausedCallInfo[];
  readonly at: number;
}

/** What executing a run resolves with: it ended, or it paused. */
export type RunResult = RunSummary | RunPaused;

/** True when a run paused. */
export function isRunPaused(result: RunResult): result is RunPaused {
  return 'calls' in result;
}

/**
 * What a run needs of its live session, implemented above `runner/` (the runtime binds it to the session's
 * sequence counter): the run gets it once when it starts, so an event is not looked up per emit. Its events are
 * delivered once durable, in order; none is held back for the machine (the outcome is written where it adopts it).
 */
export interface SessionPort {
  /** The session's key. */
  readonly key: string;
  /** Stamp, record and deliver one of the run's events on this session (its pause or end once adopted). */
  emit(event: EventInput): void;
  /** Resolves once every event emitted so far is recorded (a call's start is durable before it runs). */
  durable?(): Promise<void>;
  /** Resolves once every event emitted so far was delivered to the subscribers (or its write failed). */
  delivered?(): Promise<void>;
}

/**
 * The one port of a run to its session, handed to `executeRun` with the request: its events, and where it stands
 * (the phase `status()` shows: streaming, tools, compacting, settling).
 */
export interface RunPort extends SessionPort {
  setPhase(phase: RunPhase): void;
}

/** A user message steered into a running run, waiting for the next boundary. */
export interface SteerMessage {
  readonly messageId: string;
  readonly text: string;
  /** Its content parts (references into the workspace). */
  readonly parts?: readonly StoredPart[];
}

/** The run's inbox of steer messages: filled by the session actor, drained by the turn loop at boundaries. */
export interface SteerInbox {
  push(message: SteerMessage): void;
  /** Take every pending steer message, in arrival order. */
  take(): SteerMessage[];
  readonly pending: number;
}

/** Create an empty steer inbox. */
export function createSteerInbox(): SteerInbox {
  let queue: SteerMessage[] = [];
  return {
    push(message) {
      queue.push(message);
    },
    take() {
      const taken = queue;
      queue = [];
      return taken;
    },
    get pending() {
      return queue.length;
    },
  };
}

/**
 * A plan run or an undo waiting for its session machine to start it: `run` executes it when the machine enters
 * `running` with it (its caller hears the outcome through its own promise), `fail` refuses it when it never can.
 * It belongs to one run of one session (`sessionKey`, `runId`): only that run's START takes it.
 */
export interface RunJob {
  readonly sessionKey: string;
  readonly runId: string;
  readonly run: (request: RunRequest) => Promise<RunResult>;
  readonly fail: (error: Error) => void;
}

/** The plan runs and undos handed to session machines and not started yet, by the id their START carries. */
export interface RunJobs {
  /** Keep `job` until its machine starts it; returns the id its START event names. */
  add(job: RunJob): string;
  /**
   * The job `id` names, taken (a job starts once), when it is the job of run `runId` of session `sessionKey`: an id
   * from another process (a snapshot saved before a crash) may name another session's job here, which stays.
   */
  take(id: string, sessionKey: string, runId: string): RunJob | undefined;
  /** Refuse every job not started yet (their sessions stopped: `close()`). */
  failAll(error: Error): void;
}

/** No job waiting yet. */
export function createRunJobs(): RunJobs {
  const waiting = new Map<string, RunJob>();
  let next = 1;
  return {
    add(job) {
      const id = `job-${next++}`;
      waiting.set(id, job);
      return id;
    },
    take(id, sessionKey, runId) {
      const job = waiting.get(id);
      if (job === undefined || job.sessionKey !== sessionKey || job.runId !== runId) return undefined;
      waiting.delete(id);
      return job;
    },
    failAll(error) {
      const jobs = [...waiting.values()];
      waiting.clear();
      for (const job of jobs) job.fail(error);
    },
  };
}

/**
 * What the session machine is told when a plan run or an undo it ran stopped: its run ended as far as the
 * machine is concerned (a plan's own end or pause reached the machine through its plan events already).
 */
export function workEnded(runId: string, startedAt: number, endedAt: number): RunSummary {
  return { runId, status: 'completed', text: '', messageIds: [], startedAt, endedAt };
}
