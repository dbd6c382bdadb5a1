import { z } from 'zod';
import { RuntimeError } from '../core/errors.js';
import type { ToolSpec } from '../core/model-types.js';
import type { Tool } from './define-tool.js';

/** The tools a run may call, by name, with the specs the model is shown. */
export interface ToolRegistry {
  get(name: string): Tool | undefined;
  /** The specs shown to the model, in registration order. */
  readonly specs: readonly ToolSpec[];
  readonly size: number;
}

/** Build a registry; duplicate names are a configuration error. JSON Schemas are derived once, here. */
export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  const byName = new Map<string, Tool>();
  const specs: ToolSpec[] = [];
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      throw new RuntimeError('invalid_input', `tools: the name "${tool.name}" is used twice`);
    }
    byName.set(tool.name, tool);
    specs.push({
      name: tool.name,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.input, { io: 'input' }),
    });
  }
  return { get: (name) => byName.get(name), specs, size: byName.size };
}
