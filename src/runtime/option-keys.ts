import { RuntimeError } from '../core/index.js';

/** The record-valued options of `createRuntime`, as paths from the options object. */
const recordPaths = [
  ['providers'],
  ['queue', 'byChannel'],
  ['globalLane', 'perProvider'],
  ['authOrder'],
  ['toolGroups'],
  ['prices'],
] as const;

function valueAt(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * Refuse a `__proto__` key in a record-valued option: zod drops it without a word (so a channel's settings or
 * a provider would silently vanish), and a lookup by that name would reach the prototype.
 */
export function assertNoPrototypeKeys(options: unknown): void {
  for (const path of recordPaths) {
    const record = valueAt(options, path);
    if (typeof record === 'object' && record !== null && Object.hasOwn(record, '__proto__')) {
      throw new RuntimeError(
        'invalid_input',
        `createRuntime: ${path.join('.')} has a key "__proto__", which is not allowed as a name`,
      );
    }
  }
}

/** True when `value` looks like a tool made by `defineTool` (a name, a description and a zod input schema). */
export function isToolLike(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const tool = value as Record<string, unknown>;
  return (
    typeof tool.name === 'string' &&
    tool.name.length > 0 &&
    typeof tool.description === 'string' &&
    typeof tool.input === 'object' &&
    tool.input !== null &&
    typeof (tool.input as { safeParse?: unknown }).safeParse === 'function' &&
    (tool.execute === undefined || typeof tool.execute === 'function')
  );
}
