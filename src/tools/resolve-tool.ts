import type { ErrorInfo } from '../core/index.js';
import type { Tool } from './define-tool.js';
import { describeInvalidArgs } from './describe-invalid-args.js';
import type { ToolRegistry } from './tool-registry.js';

/** A call that may run: the tool and its validated (parsed) arguments; or why it may not. */
export type ResolvedTool =
  | { readonly ok: true; readonly tool: Tool; readonly args: unknown }
  | { readonly ok: false; readonly error: ErrorInfo };

/**
 * The one check before a tool runs, for model tool calls and plan steps alike: the tool policy (`tool_denied`),
 * the name (`not_found`, listing what is available) and the arguments against the tool's schema (`args_invalid`).
 */
export function resolveTool(tools: ToolRegistry, name: string, args: unknown): ResolvedTool {
  if (tools.isDenied(name)) {
    return { ok: false, error: { code: 'tool_denied', message: `the tool "${name}" is not allowed here` } };
  }
  const tool = tools.get(name);
  if (tool === undefined) {
    const known = tools.specs.map((spec) => spec.name).join(', ') || 'none';
    return {
      ok: false,
      error: { code: 'not_found', message: `unknown tool "${name}" (available: ${known})` },
    };
  }
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    return { ok: false, error: { code: 'args_invalid', message: describeInvalidArgs(name, parsed.error) } };
  }
  return { ok: true, tool, args: parsed.data };
}
