import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import type { ToolSpec } from '../core/index.js';
import type { Tool } from './define-tool.js';

/** The tools a run may call, by name, with the specs the model is shown. */
export interface ToolRegistry {
  /** An allowed tool by name; undefined for unknown and for denied tools. */
  get(name: string): Tool | undefined;
  /** True for a tool that exists but the tool policy removed: calling it fails the run with `tool_denied`. */
  isDenied(name: string): boolean;
  /** The specs shown to the model, in registration order. */
  readonly specs: readonly ToolSpec[];
  readonly size: number;
}

/**
 * Build a registry; duplicate names are a configuration error. JSON Schemas are derived once, here. With `allowed`,
 * only those tools are shown to the model and callable; the others are denied.
 */
export function createToolRegistry(tools: readonly Tool[], allowed?: ReadonlySet<string>): ToolRegistry {
  const byName = new Map<string, Tool>();
  const specs: ToolSpec[] = [];
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      throw new RuntimeError('invalid_input', `tools: the name "${tool.name}" is used twice`);
    }
    byName.set(tool.name, tool);
    if (allowed !== undefined && !allowed.has(tool.name)) continue;
    specs.push({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputJsonSchema ?? z.toJSONSchema(tool.input, { io: 'input' }),
    });
  }
  const denied = (name: string): boolean => allowed !== undefined && byName.has(name) && !allowed.has(name);
  return {
    get: (name) => (denied(name) ? undefined : byName.get(name)),
    isDenied: denied,
    specs,
    size: specs.length,
  };
}
