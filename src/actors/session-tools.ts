import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import { resolveToolPolicy, type ToolPolicyLayer } from '../policies/index.js';
import type { Tool } from '../tools/index.js';
import { currentTools, isToolSource, sameTools, type ToolEntry } from '../tools/index.js';
import { createToolRegistry, type ToolRegistry } from '../tools/index.js';

/** One tool-policy layer: `allow` (empty allows all) and `deny` (wins), names, globs or `group:name`. */
export const toolPolicyLayerSchema = z
  .object({ allow: z.array(z.string()).optional(), deny: z.array(z.string()).optional() })
  .strict();

/** The tool registries of a runtime: its own policy layers, then a session's layer on top. */
export interface SessionTools {
  /**
   * The registry for a session with this layer (`undefined`: the runtime's layers only), then `last` (the subagent
   * layers), which only narrow.
   */
  registryFor(layer: unknown, last?: readonly ToolPolicyLayer[]): ToolRegistry;
  /** Validate a session's layer; `invalid_input` naming the problem. */
  parseLayer(what: string, layer: unknown): ToolPolicyLayer;
  /** A configured tool by name, whatever the policy says (undo of a tool the policy removed since). */
  byName(name: string): Tool | undefined;
}

/** The registries of one tool list, built once per distinct layer. */
function createToolState(
  tools: readonly Tool[],
  layers: readonly ToolPolicyLayer[],
  groups: Record<string, string[]>,
) {
  const names = tools.map((tool) => tool.name);
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const registries = new Map<string, ToolRegistry>();
  const registryOf = (sessionLayers: readonly ToolPolicyLayer[]): ToolRegistry => {
    const key = JSON.stringify(sessionLayers);
    let registry = registries.get(key);
    if (registry === undefined) {
      const allowed = resolveToolPolicy(names, [...layers, ...sessionLayers], groups).allowed;
      registry = createToolRegistry(tools, new Set(allowed));
      registries.set(key, registry);
    }
    return registry;
  };
  // Most sessions have no layer of their own: their registry is built once and found without a key.
  return { tools, names, byName, registryOf, base: registryOf([]) };
}

/**
 * Registries by session layer, built once per distinct layer: a session layer only narrows what the runtime's
 * layers left (no grant-back), and the subagent layer of the brief is this same mechanism one level down. A tool
 * source (an MCP server's list) is read again for each registry asked for, so the next run sees a changed list.
 */
export function createSessionTools(options: {
  tools: readonly ToolEntry[];
  layers: readonly ToolPolicyLayer[];
  groups: Record<string, string[]>;
}): SessionTools {
  const { layers, groups } = options;
  const dynamic = options.tools.some(isToolSource);
  let state = createToolState(currentTools(options.tools), layers, groups);
  const current = () => {
    if (!dynamic) return state;
    const tools = currentTools(options.tools);
    if (sameTools(tools, state.tools)) return state;
    try {
      state = createToolState(tools, layers, groups);
    } catch {
      // A changed list that clashes (a name used twice) keeps the last good one rather than failing every run.
    }
    return state;
  };
  const parseLayer = (what: string, layer: unknown): ToolPolicyLayer => {
    const parsed = toolPolicyLayerSchema.safeParse(layer);
    if (!parsed.success) throw new RuntimeError('invalid_input', `${what}: ${z.prettifyError(parsed.error)}`);
    // Compiles the layer: an unknown group or a bad glob throws invalid_input here, not in a run.
    resolveToolPolicy(current().names, [parsed.data], groups);
    return parsed.data;
  };
  return {
    registryFor: (layer, last = []) => {
      const { base, registryOf } = current();
      if ((layer === undefined || layer === null) && last.length === 0) return base;
      try {
        const own = layer === undefined || layer === null ? [] : [parseLayer('session tool policy', layer)];
        return registryOf([...own, ...last]);
      } catch {
        // A stored layer that no longer compiles (a group removed from the config) denies everything rather
        // than granting what it meant to narrow.
        return registryOf([{ deny: ['*'] }]);
      }
    },
    parseLayer,
    byName: (name) => current().byName.get(name),
  };
}
