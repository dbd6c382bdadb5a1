import { z } from 'zod';
import { RuntimeError } from './errors.js';

/**
 * How deep a JSON value taken from a caller may nest (tool args, plan step args, supplied outputs). Deeper
 * values are refused at the door: serialising them overflows the stack after the state they change was written.
 */
export const maxInputDepth = 64;

/** How large a JSON value taken from a caller may be, in characters of its JSON text (about 1 MB). */
export const maxInputSize = 1_000_000;

/**
 * Why `text` cannot be stored as it is in every ledger, or undefined when it can: U+0000 (Postgres text and JSONB
 * cannot hold it, so one ledger would refuse what another accepts) or a lone UTF-16 surrogate (stored as a
 * replacement character: lossy).
 */
export function storableTextProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains U+0000 (NUL), which no ledger stores';
  if (/\p{Cs}/u.test(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

/** True when `text` can be stored as it is in every ledger (no U+0000, no lone surrogate). */
export function isStorableText(text: string): boolean {
  return storableTextProblem(text) === undefined;
}

/**
 * `text` with every U+0000 replaced by U+FFFD: what a model, a tool or a provider's error says, made storable in
 * every ledger. A caller's input with U+0000 is refused instead (`storableString`); output cannot be refused, and
 * one NUL in a reply must not cost the run its record on the ledger that cannot hold it (Postgres).
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

/** A zod string every ledger stores as it is: `storableTextProblem` finds nothing in it. */
export const storableString = () =>
  z.string().superRefine((value, context) => {
    const problem = storableTextProblem(value);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

/** Where a JSON value broke a bound, and how. */
export interface InputBoundProblem {
  /** The path of the offending value, as `args.a.0.b` (the root is the name the caller gave). */
  readonly path: string;
  readonly problem: string;
}

interface Pending {
  readonly value: unknown;
  readonly depth: number;
  readonly path: readonly (string | number)[];
}

/** The JSON text characters a scalar takes (an estimate that is exact for strings without escapes). */
function scalarSize(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value).length;
  return 4;
}

/** The children of an array or object with their keys, and the JSON text characters its brackets and keys take. */
function childrenOf(value: object): { entries: [string | number, unknown][]; size: number } {
  if (Array.isArray(value)) {
    return { entries: value.map((item: unknown, index) => [index, item]), size: 2 + value.length };
  }
  const entries = Object.entries(value);
  const size = entries.reduce((total, [key]) => total + key.length + 4, 2);
  return { entries, size };
}

/** The first key of `entries` that cannot be stored, as a problem. */
function badKeyOf(entries: readonly [string | number, unknown][]): string | undefined {
  for (const [key] of entries) {
    if (typeof key !== 'string') continue;
    const problem = storableTextProblem(key);
    if (problem !== undefined) return `has a key that ${problem}`;
  }
  return undefined;
}

/**
 * The first bound `value` breaks: nesting deeper than `maxInputDepth`, JSON text larger than `maxInputSize`, or a
 * string or key that cannot be stored (`storableTextProblem`). Walks without recursion, so a value nested
 * 100,000 deep is measured, not a stack overflow; a cyclic value is refused as too deep.
 */
export function inputBoundProblem(value: unknown, root = 'value'): InputBoundProblem | undefined {
  const stack: Pending[] = [{ value, depth: 0, path: [root] }];
  const tooLarge = { path: root, problem: `is larger than ${maxInputSize} characters of JSON` };
  let size = 0;
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop() as Pending;
    if (current === null || typeof current !== 'object') {
      const problem = typeof current === 'string' ? storableTextProblem(current) : undefined;
      if (problem !== undefined) return { path: path.join('.'), problem };
      size += scalarSize(current);
      if (size > maxInputSize) return tooLarge;
      continue;
    }
    if (depth >= maxInputDepth)
      return { path: path.join('.'), problem: `nests deeper than ${maxInputDepth} levels` };
    if (Array.isArray(current) && size + current.length > maxInputSize) return tooLarge;
    const children = childrenOf(current);
    size += children.size;
    if (size > maxInputSize) return tooLarge;
    const badKey = badKeyOf(children.entries);
    if (badKey !== undefined) return { path: path.join('.'), problem: badKey };
    for (const [key, child] of children.entries.reverse())
      stack.push({ value: child, depth: depth + 1, path: [...path, key] });
  }
  return undefined;
}

/** Refuse `value` with `invalid_input` when it breaks a bound of `inputBoundProblem`; `what` names the call. */
export function assertInputBounds(what: string, value: unknown, root = 'value'): void {
  const found = inputBoundProblem(value, root);
  if (found === undefined) return;
  throw new RuntimeError('invalid_input', `${what}: ${found.path} ${found.problem}`, {
    details: { path: found.path },
  });
}
