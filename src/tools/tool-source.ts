import type { Tool } from './define-tool.js';

/**
 * Tools whose set may change while the runtime runs (an MCP server's list): each run sees the list as it is when
 * the run starts. `current()` returns the same array until the set changes, so an unchanged source costs nothing.
 */
export interface ToolSource {
  current(): readonly Tool[];
}

/** What the runtime's `tools` option holds: tools, and sources of tools. */
export type ToolEntry = Tool | ToolSource;

/** True for a tool source (an object with `current()` and no tool `input`). */
export function isToolSource(value: unknown): value is ToolSource {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return typeof entry.current === 'function' && entry.input === undefined;
}

/** The tools of `entries` now, each source expanded where it stands. */
export function currentTools(entries: readonly ToolEntry[]): readonly Tool[] {
  return entries.flatMap((entry) => (isToolSource(entry) ? entry.current() : [entry]));
}

/** True when both lists hold the same tools in the same order. */
export function sameTools(left: readonly Tool[], right: readonly Tool[]): boolean {
  return left.length === right.length && left.every((tool, index) => tool === right[index]);
}
