import { createSubagentLane } from '../lanes/index.js';
import { subagentLayers } from '../policies/index.js';
import { resolveToolPolicy, type ToolPolicyLayer } from '../policies/index.js';
import { createSubagentTool, type SubagentPort } from '../runner/index.js';
import type { ToolEntry } from '../tools/index.js';
import type { LateBound } from '../core/index.js';
import type { RuntimeConfig } from './runtime-options.js';
import type { RuntimeInternals } from '../actors/index.js';
import { createSubagentSpawner } from '../actors/index.js';
import { createSessionHandle } from './session-handle.js';

/** A runtime's subagents: the port runs use, the tools to offer, and the last policy layers of a session. */
export interface Subagents {
  readonly port: SubagentPort;
  /** The configured tools, with `spawn_subagent` when subagents are enabled. */
  readonly tools: readonly ToolEntry[];
  /** The layers applied after a session's own (the subagent deny list and configured layer for a child). */
  layersFor(sessionKey: string): ToolPolicyLayer[];
}

/** Wire subagents from the configuration; the spawner reads the internals once a tool call runs. */
export function openSubagents(config: RuntimeConfig, internals: LateBound<RuntimeInternals>): Subagents {
  const options = config.subagents;
  // A bad glob or an unknown group in the configured layer throws invalid_input here, at construction.
  if (options.toolPolicy !== undefined) resolveToolPolicy([], [options.toolPolicy], config.toolGroups);
  const port = createSubagentSpawner({
    internals,
    lane: createSubagentLane({ concurrency: options.concurrency }),
    maxDepth: options.maxDepth,
    portOf: (sessionKey) => internals.get().services.sessionPort(sessionKey),
    childOf: (sessionKey) => createSessionHandle(internals.get(), sessionKey),
  });
  const tools = options.enabled ? [...config.tools, createSubagentTool(() => port)] : config.tools;
  return { port, tools, layersFor: (sessionKey) => subagentLayers(sessionKey, options) };
}
