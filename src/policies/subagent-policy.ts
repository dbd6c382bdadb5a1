import type { ToolPolicyLayer } from './tool-policy.js';

/** The built-in tool a run spawns a subagent with. */
export const spawnSubagentTool = 'spawn_subagent';

/**
 * Tools a subagent never gets, whatever the configuration (the seed's list): session management, spawning,
 * the messaging gateway, the agent list, cron and memory. `spawn_subagent` joins them at `maxDepth`.
 */
export const defaultSubagentDeny: readonly string[] = [
  'sessions_list',
  'sessions_history',
  'sessions_send',
  'sessions_spawn',
  'gateway',
  'agents_list',
  'session_status',
  'cron',
  'memory_search',
  'memory_get',
];

/** What separates a subagent's key from its parent's: `<parent>/sub:<id>`. */
const marker = '/sub:';

/** The key of a subagent spawned by `parentKey` with `id`. */
export function subagentKey(parentKey: string, id: string): string {
  return `${parentKey}${marker}${id}`;
}

/** How deep a session is in a subagent tree: 0 for a top-level session, 1 for its children, and so on. */
export function subagentDepth(sessionKey: string): number {
  return sessionKey.split(marker).length - 1;
}

/** The session that spawned a subagent; undefined for a top-level session. */
export function subagentParent(sessionKey: string): string | undefined {
  const at = sessionKey.lastIndexOf(marker);
  return at < 0 ? undefined : sessionKey.slice(0, at);
}

/**
 * The policy layers applied last to a session's tools, after the runtime's and the session's own (none while
 * subagents are off): for a subagent, the default deny list (with `spawn_subagent` once it is at `maxDepth`), then
 * the configured layer; for a top-level session, only `spawn_subagent` denied when `maxDepth` is 0. Layers only
 * narrow, so nothing the parent lacked is granted back.
 */
export function subagentLayers(
  sessionKey: string,
  options: {
    readonly enabled: boolean;
    readonly maxDepth: number;
    readonly toolPolicy?: ToolPolicyLayer | undefined;
  },
): ToolPolicyLayer[] {
  if (!options.enabled) return [];
  const depth = subagentDepth(sessionKey);
  const atMaxDepth = depth >= options.maxDepth;
  if (depth === 0) return atMaxDepth ? [{ deny: [spawnSubagentTool] }] : [];
  const deny = atMaxDepth ? [...defaultSubagentDeny, spawnSubagentTool] : [...defaultSubagentDeny];
  return options.toolPolicy === undefined ? [{ deny }] : [{ deny }, options.toolPolicy];
}
