import { z } from 'zod';
import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { IdGenerator, Random } from '../core/index.js';
import type { ClusterWorkerOptions } from '../cluster/index.js';
import type { Ledger } from '../ledger/index.js';
import type { ProfileKind } from '../policies/index.js';
import type { DropPolicy, QueueMode } from '../policies/index.js';
import type { ModelProvider, ThinkingLevel } from '../providers/index.js';
import type { Compactor } from '../runner/index.js';
import type { ToolEntry } from '../tools/index.js';
import type { AttachmentsOptions, WorkspaceOptions } from '../actors/index.js';
import type { AuthorityOptions } from '../actors/index.js';
import { assertNoPrototypeKeys } from './option-keys.js';
import { runtimeOptionsSchema } from './runtime-options-schema.js';
import type { PostgresLedgerLocation, SqliteLedgerLocation } from './runtime-ledger-options.js';

export { runtimeOptionsSchema };
export type {
  EventRetentionOptions,
  PostgresLedgerLocation,
  SqliteLedgerLocation,
} from './runtime-ledger-options.js';

/** A provider and one of its models. */
export interface ModelRef {
  /** A key of `providers`. */
  provider: string;
  /** The provider's model name. */
  model: string;
}

/** The model every run starts with, and what it falls back to. */
export interface ModelOptions extends ModelRef {
  /** Models tried in order when this one fails with a failover reason (docs/failover.md). @default [] */
  fallbacks?: ModelRef[] | undefined;
  /**
   * The thinking level runs start from; lowered for the run when a model refuses it. @default the model's own
   */
  thinking?: ThinkingLevel | undefined;
}

/** A rate limit: at most `limit` model calls started per `intervalMs`. */
export interface RateOptions {
  /** Calls allowed per interval. */
  limit: number;
  /** The interval, in ms. */
  intervalMs: number;
}

/**
 * The lane every run of every session passes through: `concurrency` counts runs in flight (a run holds its slot
 * from its start to its end or pause), `rate` counts model requests as a provider does (every model call takes one
 * start: tool turns, retries, fallbacks and compaction summaries each count).
 */
export interface GlobalLaneOptions {
  /** Runs in flight at once, over every session. @default 8 */
  concurrency?: number | undefined;
  /** A rate limit over every model request. @default none */
  rate?: RateOptions | undefined;
  /** Tighter limits per provider, keyed by provider name, applied on top of the global ones. @default none */
  perProvider?: Record<string, ProviderLaneOptions> | undefined;
  /** A run or a request that waits longer than this for the lane emits `lane.waited` when it starts. @default 2000 */
  warnAfterMs?: number | undefined;
}

/** One provider's own limits inside the global lane. */
export interface ProviderLaneOptions {
  /** Runs in flight at once whose first model is this provider's. @default the global concurrency */
  concurrency?: number | undefined;
  /** A rate limit over this provider's model requests. @default none */
  rate?: RateOptions | undefined;
}

/** Queue settings of one layer; every field left out falls through to the next layer (docs/semantics.md). */
export interface QueueLayerOptions {
  /** What a message does when its session is busy. @default 'collect' */
  mode?: QueueMode | undefined;
  /** Quiet time after the last queued message before the queue drains, in ms. @default 1000 */
  debounceMs?: number | undefined;
  /** Longest wait after a run ended before the queue drains anyway, in ms. @default 5000 */
  maxWaitMs?: number | undefined;
  /** Most messages a session's queue holds (at most 10,000). @default 20 */
  cap?: number | undefined;
  /** What a full queue does with a newcomer. @default 'summarize' */
  drop?: DropPolicy | undefined;
}

/** The runtime's queue settings, and overrides per channel (the part of the session key before ':'). */
export interface QueueOptions extends QueueLayerOptions {
  /** Queue settings per channel, between the runtime's and the session's. @default {} */
  byChannel?: Record<string, QueueLayerOptions> | undefined;
}

/** Bounds on one run. */
export interface LimitsOptions {
  /** Model turns that ask for tools in one run before it fails with `turn_limit`. @default 25 */
  maxToolTurns?: number | undefined;
  /** Longest a run may take before it ends with status 'timeout', in ms. @default 600_000 (10 min) */
  runTimeoutMs?: number | undefined;
  /** Tool calls of one model turn run at once; 1 runs them one at a time. @default 4 */
  parallelToolCalls?: number | undefined;
  /** Invalid tool arguments sent back to the model for correction per run before it fails. @default 3 */
  toolCorrectionBudget?: number | undefined;
  /**
   * How long an interrupting message waits for the old run to end before it queues normally. @default 15_000
   */
  interruptWaitMs?: number | undefined;
  /** Earlier turns of the session sent with each run. @default 50 */
  historyTurns?: number | undefined;
  /**
   * How long a paused run waits for decisions and results before it continues without them. @default
   * 86_400_000 (24 h)
   */
  pauseTimeoutMs?: number | undefined;
}

/** Session lifetime in memory. */
export interface SessionsOptions {
  /**
   * An idle session leaves memory after this many ms (its state stays in the ledger). @default 300_000 (5
   * min)
   */
  hibernateAfterMs?: number | undefined;
}

/** How streamed text is cut into `assistant.block` events. */
export interface BlocksOptions {
  /** A block is not cut before this many characters. @default 800 */
  minChars?: number | undefined;
  /** A block is cut by this many characters at the latest. @default 1200 */
  maxChars?: number | undefined;
}

/** One tool policy layer: deny wins, an empty allow allows all; `*`, `prefix_*` and `group:name` entries. */
export interface ToolPolicyLayer {
  /** Tools this layer lets through. @default every tool the previous layer left */
  allow?: string[] | undefined;
  /** Tools this layer removes. @default none */
  deny?: string[] | undefined;
}

/** Which tool calls pause for an operator. */
export interface ApprovalOptions {
  /** Tool names or globs that always need approval, besides every `risk: 'high'` tool. @default [] */
  alwaysApprove?: string[] | undefined;
}

/**
 * One credential of a provider, rotated on failure with cooldowns (docs/failover.md, "Which profile is
 * tried").
 */
export interface AuthProfileOption {
  /** A unique id, used in `authOrder`, events and the ledger (never the secret). */
  id: string;
  /** A key of `providers`. */
  provider: string;
  /** How it authenticates; without `authOrder`, oauth is tried before token before api_key. */
  type: ProfileKind;
  /** The secret (`'sk-…'` or `{ value }`), or `{ env }` to read it from an environment variable at call time. */
  secret: string | SecretFromEnvironment | SecretValue;
}

/** A secret read from an environment variable at call time (so a rotated key needs no restart). */
export interface SecretFromEnvironment {
  /** The variable's name; a profile whose variable is unset is skipped and reported, never called. */
  env: string;
}

/** A secret given as a value. */
export interface SecretValue {
  /** The secret itself; it is scrubbed from every error message and never reaches the ledger or events. */
  value: string;
}

/** What happens when a model call fails. */
export interface FailoverOptions {
  /** Scope rate-limit cooldowns to the model that failed. @default false */
  perModelCooldown?: boolean | undefined;
  /** Attempts per model call, over every profile and model. @default clamp(24 + 8 × profiles, 32, 160) */
  maxAttempts?: number | undefined;
  /**
   * When every profile of every model is cooling, how long a call waits for the soonest one. @default 60_000
   */
  maxWaitMs?: number | undefined;
}

/** A model's price per million tokens. */
export interface PriceOptions {
  /** Per million input tokens. */
  input: number;
  /** Per million output tokens. */
  output: number;
}

/** What becomes of runs a crash left running. */
export interface RecoveryOptions {
  /** `resume`: they go on under the same run id; `close`: they are closed `crashed`. @default 'resume' */
  crashedRuns?: 'resume' | 'close' | undefined;
  /** Resumes one run may have, across restarts and takeovers. @default 2 */
  maxResumes?: number | undefined;
  /** A run that started longer ago than this (by the runtime's clock) is closed instead. @default 86_400_000 */
  maxAgeMs?: number | undefined;
}

/** Subagents: children a run spawns with `spawn_subagent`, in their own lane, with narrowed tools. */
export interface SubagentOptions {
  /** Offer `spawn_subagent` to runs. @default false */
  enabled?: boolean | undefined;
  /** Child runs at once in the subagent lane (separate from the global lane). @default 8 */
  concurrency?: number | undefined;
  /** A last tool-policy layer for children, after the default deny list; it only narrows. @default none */
  toolPolicy?: ToolPolicyLayer | undefined;
  /** How deep children may nest: 1 lets a run spawn children but not grandchildren. @default 1 */
  maxDepth?: number | undefined;
}

/**
 * The options of `createRuntime`; every one is validated at construction (bad ones throw `invalid_input`).
 */
export interface RuntimeOptions {
  /**
   * A Ledger instance (the caller keeps owning it), or where the runtime opens its SQLite ledger, or its Postgres
   * ledger (`{ postgres: { connectionString } }`). @default { path: './agentlanes.db', synchronous: 'full' }
   */
  ledger?: Ledger | SqliteLedgerLocation | PostgresLedgerLocation | undefined;
  /** The model providers, by name. */
  providers: Record<string, ModelProvider>;
  /** The model runs use, and its fallbacks. */
  model: ModelOptions;
  /** Runs in flight and model requests per interval. @default { concurrency: 8, warnAfterMs: 2000 } */
  globalLane?: GlobalLaneOptions | undefined;
  /** Queue settings for messages that arrive while a session is busy. @default { mode: 'collect' } */
  queue?: QueueOptions | undefined;
  /** The tools runs may call, made with `defineTool`, and tool sources (`mcpTools` from `agentlanes/mcp`). @default [] */
  tools?: ToolEntry[] | undefined;
  /** Bounds on each run. @default { maxToolTurns: 25, runTimeoutMs: 600_000, parallelToolCalls: 4 } */
  limits?: LimitsOptions | undefined;
  /** Session lifetime in memory. @default { hibernateAfterMs: 300_000 } */
  sessions?: SessionsOptions | undefined;
  /** How streamed text is cut into blocks. @default { minChars: 800, maxChars: 1200 } */
  blocks?: BlocksOptions | undefined;
  /** Tool policy layers, each filtering what the previous one left; nothing is granted back. @default [] */
  toolPolicy?: ToolPolicyLayer[] | undefined;
  /** Named groups of tool names or globs, used as `group:name` in `toolPolicy`. @default {} */
  toolGroups?: Record<string, string[]> | undefined;
  /**
   * The built-in `spawn_subagent({ task })` tool: a run starts a child session `<parent>/sub:<id>` in the subagent
   * lane, with the parent's tools narrowed. @default { enabled: false, concurrency: 8, maxDepth: 1 }
   */
  subagents?: SubagentOptions | undefined;
  /**
   * What becomes of runs a crash (or a cluster worker's death) left running: they resume from their last durable
   * boundary, at most `maxResumes` times and while younger than `maxAgeMs`; past that, or with `crashedRuns:
   * 'close'`, they are closed `crashed` (docs/guarantees.md). @default { crashedRuns: 'resume', maxResumes: 2,
   * maxAgeMs: 86_400_000 }
   */
  recovery?: RecoveryOptions | undefined;
  /**
   * Roles of the senders in group chats (docs/semantics.md, "Authority in group chats"): the role list (highest
   * first), the role of a message that names none, tool-policy layers and control rules per role, and whether the
   * model sees who said what. @default none: messages that name no role are `guest`, no role layer, no sender lines
   */
  authority?: AuthorityOptions | undefined;
  /** Which tool calls pause for an operator. @default { alwaysApprove: [] } */
  approvals?: ApprovalOptions | undefined;
  /** Credentials per provider, rotated on failure with cooldowns. @default [] (calls carry no credential) */
  authProfiles?: AuthProfileOption[] | undefined;
  /**
   * An explicit profile order per provider (ids); profiles it omits follow in the default order. @default {}
   */
  authOrder?: Record<string, string[]> | undefined;
  /** Failover bounds and cooldown scope. @default { perModelCooldown: false, maxWaitMs: 60_000 } */
  failover?: FailoverOptions | undefined;
  /**
   * Prices per million tokens, keyed 'provider/model'; a model without a price costs 0 (and says so).
   * @default {}
   */
  prices?: Record<string, PriceOptions> | undefined;
  /** Shrinks a conversation that overflows the model's context. @default the model summarises older turns */
  compactor?: Compactor | undefined;
  /** The system prompt of every run. @default none */
  systemPrompt?: string | undefined;
  /** Where content parts are stored. @default { root: './agentlanes-workspace' } */
  workspace?: WorkspaceOptions | undefined;
  /**
   * Limits on content parts, where `url` parts may be fetched from, and what models take inline.
   * @default { maxPartBytes: 20 MiB, maxMessageBytes: 50 MiB, fetch: public addresses only }
   */
  attachments?: AttachmentsOptions | undefined;
  /** Time for every timer, timeout and timestamp; tests pass `fakeClock()`. @default the system clock */
  clock?: Clock | undefined;
  /** Randomness for retry jitter; tests pass `seededRandom(seed)`. @default Math.random */
  random?: Random | undefined;
  /** Makes ids (`run_…`, `msg_…`); tests pass `sequentialIds()`. @default random UUID-based ids */
  ids?: IdGenerator | undefined;
  /**
   * Where runtime-internal failures (a background ledger write that failed) are reported. @default
   * console.error
   */
  onError?: ((error: unknown) => void) | undefined;
  /** Cluster timing and plan-step jobs (docs/distributed.md) with the Postgres ledger; `false`: one process. @default {} */
  cluster?: ClusterWorkerOptions | false | undefined;
}

/** The validated runtime configuration, defaults filled in. @internal */
export type RuntimeConfig = z.output<typeof runtimeOptionsSchema>;

/** Validate options; bad configuration throws `invalid_input` naming every bad field. @internal */
export function parseRuntimeOptions(options: RuntimeOptions): RuntimeConfig {
  assertNoPrototypeKeys(options);
  const parsed = runtimeOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  throw new RuntimeError('invalid_input', `createRuntime: ${z.prettifyError(parsed.error)}`, {
    cause: parsed.error,
  });
}
