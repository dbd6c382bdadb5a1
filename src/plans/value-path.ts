import type { Segment } from './placeholder-syntax.js';

/** What reading a path out of a value gave: the value, or why there is none. */
export type PathRead =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

/** "a string", "an array", "null"…: for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`;
}

function readKey(value: unknown, key: string): PathRead {
  if (Array.isArray(value)) return { ok: false, reason: `cannot read key "${key}" of an array` };
  if (typeof value !== 'object' || value === null) {
    return { ok: false, reason: `cannot read key "${key}" of ${describeValue(value)}` };
  }
  // Own keys only: `$x.constructor` must not reach the prototype. JSON has no undefined, so it is missing.
  const found: unknown = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  return found === undefined ? { ok: false, reason: `key "${key}" is missing` } : { ok: true, value: found };
}

function readIndex(value: unknown, index: number): PathRead {
  if (!Array.isArray(value))
    return { ok: false, reason: `cannot index ${describeValue(value)} with [${index}]` };
  if (index >= value.length) {
    return { ok: false, reason: `index ${index} is out of range (length ${value.length})` };
  }
  return { ok: true, value: value[index] as unknown };
}

function readMap(value: unknown, rest: readonly Segment[]): PathRead {
  if (!Array.isArray(value)) return { ok: false, reason: `.* needs an array, got ${describeValue(value)}` };
  const mapped: unknown[] = [];
  for (const [index, element] of value.entries()) {
    const read = readValuePath(element, rest);
    if (!read.ok) return { ok: false, reason: `element ${index}: ${read.reason}` };
    mapped.push(read.value);
  }
  return { ok: true, value: mapped };
}

/**
 * Follow `path` into `value`. `.*` maps the rest of the path over each element of an array (nested `.*`
 * gives nested arrays, no flattening); `[*]` cannot be read, it is for expansion only.
 */
export function readValuePath(value: unknown, path: readonly Segment[]): PathRead {
  let current = value;
  for (const [position, segment] of path.entries()) {
    let read: PathRead;
    switch (segment.kind) {
      case 'key':
        read = readKey(current, segment.key);
        break;
      case 'index':
        read = readIndex(current, segment.index);
        break;
      case 'map':
        return readMap(current, path.slice(position + 1));
      case 'expand':
        return {
          ok: false,
          reason: '[*] expands a step into one step per item; it cannot be read as a value',
        };
    }
    if (!read.ok) return read;
    current = read.value;
  }
  return { ok: true, value: current };
}
