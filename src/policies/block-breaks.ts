import { isInside, scanBreakGuards } from './code-fences.js';
import type { BreakGuard, FenceInfo } from './code-fences.js';

/** Kinds of break, best first; `fence-line` splits a too-long fence at a line end, closing and reopening it. */
export const breakKinds = ['paragraph', 'newline', 'sentence', 'whitespace', 'fence-line', 'hard'] as const;
/** One kind of break. */
export type BreakKind = (typeof breakKinds)[number];
const softKinds: readonly BreakKind[] = ['paragraph', 'newline', 'sentence', 'whitespace'];

/** Where a block ends, and how; `fence` is set when an open fence is closed there and reopened after. */
export interface Break {
  readonly kind: BreakKind;
  readonly index: number;
  readonly fence?: FenceInfo | undefined;
}

/** Leading whitespace to drop before the next block: none, blank lines only, or any (after a mid-line break). */
export type PendingTrim = 'none' | 'lines' | 'inline';

/** A block cut from the buffer, the text left after it, and how that text starts. */
export interface Split {
  readonly block: string;
  readonly rest: string;
  readonly trim: PendingTrim;
  readonly atLineStart: boolean;
}

/** How much of the window is known: only a paragraph break can be taken early; at the end all text is in. */
export type BreakScope = 'paragraph' | 'complete' | 'final';

/** Smallest and largest size of a block. */
export interface BlockSizes {
  readonly minChars: number;
  readonly maxChars: number;
}

/** The best break in `text`, or undefined when more text could still change the choice. */
export function findBreak(
  text: string,
  atLineStart: boolean,
  sizes: BlockSizes,
  scope: BreakScope,
): Break | undefined {
  const { minChars, maxChars } = sizes;
  const { guards, pendingFrom } = scanBreakGuards(text, maxChars, atLineStart, scope === 'final');
  const found = new Map<BreakKind, Break>();
  const last = Math.min(maxChars, text.length - 1);
  let guardIndex = 0;
  let indented = { index: -1, value: false };
  for (let index = minChars; index <= last; index++) {
    const char = text[index];
    if (char !== '\n' && char !== ' ' && char !== '\t') continue;
    if (char !== '\n') {
      // Breaking inside a line's indentation gains nothing over the newline before it.
      const value = indented.index === index - 1 ? indented.value : isIndentation(text, index, atLineStart);
      indented = { index, value };
      if (value) continue;
    }
    while ((guards[guardIndex]?.end ?? Infinity) <= index) guardIndex++;
    const guard = guards[guardIndex];
    const kind = classify(text, index, guard, minChars);
    if (kind === undefined || found.has(kind)) continue;
    found.set(kind, { kind, index, fence: kind === 'fence-line' ? guard?.fence : undefined });
    // The earliest paragraph break is final: nothing after it can beat it.
    if (kind === 'paragraph') return found.get(kind);
  }
  // An unfinished line that may open or close a fence changes what the window allows: wait for it.
  if (scope === 'paragraph' || (scope === 'complete' && pendingFrom <= maxChars)) return undefined;
  for (const kind of softKinds) {
    const chosen = found.get(kind);
    if (chosen !== undefined) return chosen;
  }
  return fallbackBreak(text, atLineStart, sizes, guards, found.get('fence-line'));
}

/** The kind of break possible before `text[index]` (a newline, space or tab), if any. */
function classify(
  text: string,
  index: number,
  guard: BreakGuard | undefined,
  minChars: number,
): BreakKind | undefined {
  const char = text[index];
  if (isInside(guard, index)) {
    return char === '\n' && canSplit(guard?.fence, index, minChars) ? 'fence-line' : undefined;
  }
  if (char === '\n') {
    return text[index + 1] === '\n' || text[index - 1] === '\n' ? 'paragraph' : 'newline';
  }
  const previous = text[index - 1];
  return previous === '.' || previous === '!' || previous === '?' ? 'sentence' : 'whitespace';
}

/**
 * The break when the window holds no soft boundary. A fence (or possible fence line) covering the window is
 * moved whole to the next block when something precedes it; a fence that starts the block is longer than a
 * block, so it is split at a line end, else at `maxChars`, and closed and reopened. Plain text is cut at
 * `maxChars` (off a surrogate pair), or before the line when the cut would fall in its indentation.
 */
function fallbackBreak(
  text: string,
  atLineStart: boolean,
  sizes: BlockSizes,
  guards: readonly BreakGuard[],
  fenceLine: Break | undefined,
): Break {
  let index = sizes.maxChars;
  const code = text.charCodeAt(index - 1);
  if (code >= 0xd800 && code <= 0xdbff && index > 1) index -= 1;
  const guard = guards.find((candidate) => isInside(candidate, index));
  if (guard !== undefined && guard.start > 0) return { kind: 'hard', index: guard.start };
  if (fenceLine !== undefined) return fenceLine;
  if (guard !== undefined && canSplit(guard.fence, index, sizes.minChars)) {
    if (index < guard.closeStart) return { kind: 'hard', index, fence: guard.fence };
    // Never cut the closing line itself: close before it (the reopened fence is then empty).
    const lastContentEnd = guard.closeStart - 1;
    if (lastContentEnd > guard.fence.openEnd)
      return { kind: 'fence-line', index: lastContentEnd, fence: guard.fence };
  }
  const lineStart = isIndentation(text, index, atLineStart) ? text.lastIndexOf('\n', index) + 1 : 0;
  return { kind: 'hard', index: lineStart > 0 ? lineStart : index };
}

/** True when only spaces and tabs stand between the start of its line and `text[index]`. */
function isIndentation(text: string, index: number, atLineStart: boolean): boolean {
  let start = index;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  return start === 0 ? atLineStart : text[start - 1] === '\n';
}

/**
 * True when a fence may be closed before `index` and reopened: the break is in the fence's content and the
 * reopening line leaves room in the next block (an absurdly long opening line is cut like plain text).
 */
function canSplit(fence: FenceInfo | undefined, index: number, minChars: number): fence is FenceInfo {
  if (fence === undefined) return false;
  const reopenLength = fence.opener.length + 1;
  // The reopened rest must be shorter than the text it replaces, or the chunker would not progress.
  return index > fence.openEnd && index > reopenLength && reopenLength < minChars;
}

/** Cut `text` at a break into the block to emit and the text left for the next one. */
export function splitAt(text: string, chosen: Break): Split {
  const head = text.slice(0, chosen.index);
  if (chosen.fence !== undefined) {
    // A fence split at a line end drops that newline; a hard split keeps the rest of the line.
    const restStart = chosen.kind === 'fence-line' ? chosen.index + 1 : chosen.index;
    const block = `${chosen.kind === 'fence-line' ? head.trimEnd() : head}\n${chosen.fence.closer}`;
    const rest = `${chosen.fence.opener}\n${text.slice(restStart)}`;
    return { block, rest, trim: 'none', atLineStart: true };
  }
  const block = head.trimEnd();
  switch (chosen.kind) {
    case 'paragraph':
    case 'newline':
      return { block, rest: text.slice(chosen.index + 1), trim: 'lines', atLineStart: true };
    case 'sentence':
    case 'whitespace':
      return {
        block,
        rest: text.slice(chosen.index),
        trim: 'inline',
        atLineStart: startsLine(text, chosen.index),
      };
    case 'fence-line':
    case 'hard':
      return {
        block,
        rest: text.slice(chosen.index),
        trim: 'none',
        atLineStart: startsLine(text, chosen.index),
      };
  }
}

/** True when `text[index]` begins a line, ignoring the indentation before it. */
function startsLine(text: string, index: number): boolean {
  let start = index;
  while (start > 0 && (text[start - 1] === ' ' || text[start - 1] === '\t')) start--;
  return start > 0 && text[start - 1] === '\n';
}
