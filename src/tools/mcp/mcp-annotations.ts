import type { ToolRisk } from '../define-tool.js';

/** The hints an MCP server may give about a tool (MCP `ToolAnnotations`); untrusted unless the server is. */
export interface McpToolHints {
  readonly readOnlyHint?: boolean | undefined;
  readonly destructiveHint?: boolean | undefined;
  readonly idempotentHint?: boolean | undefined;
}

/**
 * The risk of an MCP tool: an override by the tool's server-side name wins; else `destructiveHint: true` is `high`,
 * `readOnlyHint: true` or `destructiveHint: false` is `low`, and a tool that says neither gets `unannotated` (MCP's
 * own defaults read an unannotated tool as possibly destructive, so the caller's default is `high`).
 */
export function riskOfMcpTool(
  name: string,
  hints: McpToolHints | undefined,
  settings: { readonly overrides: Readonly<Record<string, ToolRisk>>; readonly unannotated: ToolRisk },
): ToolRisk {
  const override = Object.hasOwn(settings.overrides, name) ? settings.overrides[name] : undefined;
  if (override !== undefined) return override;
  // Destructive wins over read-only: a server that claims both is trusted with the safer reading.
  if (hints?.destructiveHint === true) return 'high';
  if (hints?.readOnlyHint === true || hints?.destructiveHint === false) return 'low';
  return settings.unannotated;
}

/** Whether a call may run again after a crash cut it before its outcome was recorded: read-only or idempotent. */
export function isIdempotentMcpTool(hints: McpToolHints | undefined): boolean {
  return hints?.readOnlyHint === true || hints?.idempotentHint === true;
}
