import { compileToolPatterns } from './tool-pattern.js';
import type { ToolGroups } from './tool-pattern.js';

/** One layer of tool policy (runtime, per-session or per-agent, subagent defaults). */
export interface ToolPolicyLayer {
  readonly allow?: readonly string[] | undefined;
  readonly deny?: readonly string[] | undefined;
}

/** The outcome of applying every layer: the tools the model may see and call, and the ones removed. */
export interface ResolvedToolPolicy {
  readonly allowed: string[];
  readonly denied: string[];
}

/**
 * Apply `layers` in order, each filtering what the previous one left; deny beats allow within a layer.
 * @param groups lists referred to as `group:<name>`; a reference to a missing group throws `invalid_input`.
 */
export function resolveToolPolicy(
  tools: readonly string[],
  layers: readonly ToolPolicyLayer[],
  groups: ToolGroups = {},
): ResolvedToolPolicy {
  // Compile every layer first, so bad configuration throws even when an earlier layer emptied the list.
  const filters = layers.map((layer) => {
    const allow = layer.allow ?? [];
    const isAllowed = allow.length === 0 ? () => true : compileToolPatterns(allow, groups);
    const isDenied = compileToolPatterns(layer.deny ?? [], groups);
    return (name: string) => isAllowed(name) && !isDenied(name);
  });
  const unique = [...new Set(tools)];
  // A layer only ever narrows the previous result, so nothing removed can be granted back.
  const allowed = filters.reduce((remaining, keep) => remaining.filter(keep), unique);
  const allowedSet = new Set(allowed);
  return { allowed, denied: unique.filter((name) => !allowedSet.has(name)) };
}

/** True when `name` survived every layer; a tool that was never offered is not allowed. */
export function isToolAllowed(name: string, resolved: { readonly allowed: readonly string[] }): boolean {
  return resolved.allowed.includes(name);
}
