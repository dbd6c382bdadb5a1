import type { Clock, IdGenerator, Random } from '../core/index.js';
import type { GlobalLane } from '../lanes/index.js';
import type { Ledger } from '../ledger/index.js';
import type { StepToolRunner } from '../plans/index.js';
import type { ThinkingLevel } from '../providers/index.js';
import type { Tool, ToolRegistry, WorkspaceStore } from '../tools/index.js';
import type { Compactor } from './compaction.js';
import type { AuthProfilePool, ModelCandidate, PriceLookup } from './model-call.js';
import type { RunLimits } from './run-context.js';
import type { SessionPort } from './run-request.js';
import type { SubagentPort } from './subagent-port.js';

/** The run limits the lifecycle applies on top of the turn loop's. */
export interface RunServiceLimits extends RunLimits {
  /** The longest a run may take before it ends with `timeout`. */
  readonly runTimeoutMs: number;
  /** Earlier turns a new run sees (0: none). */
  readonly historyTurns: number;
}

/** A run's hold on the ledger's health, from its start in the lanes to its end. */
export interface RunLease {
  /** True once the ledger faulted while the run was active (or before it started): its records are incomplete. */
  readonly lost: boolean;
  /** The run settled (its closing may still be held back; see `LedgerGuard.healed`). */
  exit(): void;
}

/**
 * The runtime's watch over the ledger (runtime/ledger-health.ts). A write that fails because the storage failed
 * aborts every active run; such a run writes nothing more (its end included) and waits for `healed`, after which its
 * session is reconciled from what the ledger holds (its open run closed as a crash closes it).
 */
export interface LedgerGuard {
  /** A run starts: `abort` is called when the ledger faults while it runs (at once when it is faulted now). */
  enter(abort: () => void): RunLease;
  /** Resolves once writes commit again and the sessions are being reconciled (or the runtime is closing). */
  healed(): Promise<void>;
  /** The runtime is closing: stop retrying and let held runs settle (their runs stay open for the next start). */
  stop(): void;
}

/** The models a run calls and how: candidates in fallback order, auth profiles, prices, compaction. */
export interface ModelServices {
  /** The models to call, in fallback order (the first is the run's primary model). */
  readonly candidates: readonly [ModelCandidate, ...ModelCandidate[]];
  readonly thinking: ThinkingLevel | undefined;
  readonly profiles: AuthProfilePool;
  readonly prices: PriceLookup;
  /** Attempts one model call may make over candidates and profiles. */
  readonly maxAttempts: number;
  /** The longest a model call waits for a cooling profile (`failover.maxWaitMs`). */
  readonly maxWaitMs: number;
  readonly system: string | undefined;
  readonly compactor: Compactor;
}

/** The tools a run may call, and where their parts and subagents live. */
export interface ToolServices {
  /** The tools a session's runs may call (the runtime's policy layers, then the session's own). */
  readonly toolsFor: (sessionKey: string) => ToolRegistry;
  /** A configured tool by name, whatever the policy says (undo of a tool the policy removed since). */
  readonly toolByName: (name: string) => Tool | undefined;
  /** Runs plan steps as jobs on any worker of a cluster; without it a plan's steps run in its run. @default inline */
  readonly stepJobs?: StepToolRunner;
  /** Tool names or globs that need approval whatever their risk. */
  readonly alwaysApprove: readonly string[];
  /** Subagents: their lane, the spawn behind `spawn_subagent`, and the parent a child's run records. */
  readonly subagents: SubagentPort;
  /** Where content parts are stored; inline attachments are read from it right before each model call. */
  readonly workspace: WorkspaceStore;
}

/** The lanes a run waits in, and whether the runtime still starts runs. */
export interface LaneServices {
  readonly globalLane: GlobalLane;
  /** False once the runtime is closing: runs that have not started yet stay queued. */
  readonly accepting: () => boolean;
}

/** Where a run records what it did, and where it reports what it could not. */
export interface RecordServices {
  readonly ledger: Ledger;
  /** Stops runs at a write the ledger cannot take, and holds their end until it heals. @default none */
  readonly ledgerGuard?: LedgerGuard | undefined;
  /** Reports a failure in the background (a ledger write). */
  readonly onError: (error: unknown) => void;
  /** A live session's port: plan runs, undo and subagents emit through it (a chat run gets its own from the machine). */
  readonly sessionPort: (sessionKey: string) => SessionPort;
}

/** What every run reads: the injected clock, ids and randomness, and the limits. */
export interface RunBasics {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly random: Random;
  readonly limits: RunServiceLimits;
  readonly blocks: { readonly minChars: number; readonly maxChars: number };
}

/**
 * What runs share, built once by `createRuntime`: the basics and four capabilities. A function takes only the
 * capabilities it uses (a model call: `RunBasics & ModelServices`).
 */
export type RunServices = RunBasics & ModelServices & ToolServices & LaneServices & RecordServices;

/** Issue a ledger write whose failure is reported to `onError` instead of awaited. */
export function writeInBackground(services: Pick<RecordServices, 'onError'>, promise: Promise<void>): void {
  promise.catch(services.onError);
}
