import type { LiveSession } from '../actors/index.js';
import type { GlobalLane } from '../lanes/index.js';
import type { Ledger } from '../ledger/index.js';
import type { StepToolRunner } from '../plans/index.js';
import { maxAttempts } from '../policies/index.js';
import { systemWithSenderLines } from '../policies/index.js';
import type { ModelProvider } from '../providers/index.js';
import type { AuthProfilePool, ModelCandidate } from '../runner/index.js';
import type { RunServices } from '../runner/index.js';
import type { SessionPort } from '../runner/index.js';
import type { SubagentPort } from '../runner/index.js';
import type { Tool } from '../tools/index.js';
import type { ToolRegistry } from '../tools/index.js';
import { createWorkspaceStore } from '../tools/index.js';
import type { EventBus } from '../events/index.js';
import type { RuntimeConfig } from './runtime-options.js';

/** What `buildRunServices` takes besides the configuration: the parts `createRuntime` opened. */
export interface RunServiceParts {
  readonly ledger: Ledger;
  readonly bus: EventBus;
  readonly profiles: AuthProfilePool;
  readonly globalLane: GlobalLane;
  readonly toolsFor: (sessionKey: string) => ToolRegistry;
  readonly toolByName: (name: string) => Tool | undefined;
  /** The live session of a key. */
  readonly live: (sessionKey: string) => LiveSession | undefined;
  readonly accepting: () => boolean;
  readonly onError: (error: unknown) => void;
  readonly subagents: SubagentPort;
  /** Plan steps as cluster jobs (a cluster worker's, unless its `planSteps` is `inline`). */
  readonly stepJobs?: StepToolRunner | undefined;
}

/** The models of the configuration, in fallback order. */
function candidatesOf(config: RuntimeConfig): readonly [ModelCandidate, ...ModelCandidate[]] {
  return [config.model, ...config.model.fallbacks].map((ref) => ({
    providerName: ref.provider,
    provider: config.providers[ref.provider] as ModelProvider,
    model: ref.model,
  })) as [ModelCandidate, ...ModelCandidate[]];
}

/**
 * A session's port for one run: the bus bound to the live session's numbering, looked up once. Its events are
 * delivered once durable; a run's pause or end is written where the session machine adopts it (actors/session-runs.ts).
 */
function sessionPortOf(parts: RunServiceParts, sessionKey: string): SessionPort {
  const live = parts.live(sessionKey);
  if (live === undefined) {
    return {
      key: sessionKey,
      emit: (event) =>
        parts.onError(new Error(`event ${event.type} for session "${sessionKey}", which is not live`)),
    };
  }
  return {
    key: sessionKey,
    emit: (event) => parts.bus.emit(live, event),
    durable: () => parts.bus.flushed(),
    delivered: () => parts.bus.deliveredThrough(parts.bus.cursor),
  };
}

/** Build the one `RunServices` bag of a runtime. */
export function buildRunServices(config: RuntimeConfig, parts: RunServiceParts): RunServices {
  return {
    ledger: parts.ledger,
    clock: config.clock,
    ids: config.ids,
    random: config.random,
    candidates: candidatesOf(config),
    thinking: config.model.thinking,
    profiles: parts.profiles,
    prices: (provider, model) => config.prices[`${provider}/${model}`],
    maxAttempts: config.failover.maxAttempts ?? maxAttempts(config.authProfiles.length),
    maxWaitMs: config.failover.maxWaitMs,
    globalLane: parts.globalLane,
    toolsFor: parts.toolsFor,
    toolByName: parts.toolByName,
    limits: config.limits,
    blocks: config.blocks,
    // With sender lines the model is told what they are (docs/semantics.md, "Authority in group chats").
    system:
      config.authority?.attribution === true
        ? systemWithSenderLines(config.systemPrompt)
        : config.systemPrompt,
    compactor: config.compactor,
    alwaysApprove: config.approvals.alwaysApprove,
    subagents: parts.subagents,
    sessionPort: (sessionKey) => sessionPortOf(parts, sessionKey),
    accepting: parts.accepting,
    onError: parts.onError,
    workspace: createWorkspaceStore(config.workspace.root),
    ...(parts.stepJobs === undefined ? {} : { stepJobs: parts.stepJobs }),
  };
}
