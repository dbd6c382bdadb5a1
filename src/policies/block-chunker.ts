import { RuntimeError } from '../core/errors.js';
import { isInside, scanBreakGuards } from './code-fences.js';
import type { BreakGuard, FenceInfo } from './code-fences.js';

/** Options of the block chunker. */
export interface BlockChunkerOptions {
  /** A block is emitted once the buffer holds this many characters. @default 800 */
  readonly minChars?: number;
  /** No block is longer than this (plus a closing fence line when a fence must be split). @default 1200 */
  readonly maxChars?: number;
}

/** Turns streamed assistant text into chat-sized blocks. */
export interface BlockChunker {
  /** Append streamed text; returns the blocks completed by it (often none). */
  push(delta: string): string[];
  /** End of the stream: returns the remaining text as blocks, and empties the chunker. */
  flush(): string[];
}

// Kinds of break, best first. `fence-line` splits a too-long fence at a line end, closing and reopening it.
type BreakKind = 'paragraph' | 'newline' | 'sentence' | 'whitespace' | 'fence-line' | 'hard';
const softKinds: readonly BreakKind[] = ['paragraph', 'newline', 'sentence', 'whitespace'];

interface Break {
  readonly kind: BreakKind;
  readonly index: number;
  readonly fence?: FenceInfo | undefined;
}

// Leading whitespace to drop before the next block: none, blank lines only, or any (after a mid-line break).
type PendingTrim = 'none' | 'lines' | 'inline';

interface Split {
  readonly block: string;
  readonly rest: string;
  readonly trim: PendingTrim;
}

/**
 * Create a chunker that breaks text into blocks of `minChars`..`maxChars` characters at the best boundary:
 * paragraph, newline, sentence end, whitespace, else a hard break. A code fence is never split unless it is
 * longer than a block; then it is closed at the end of the block and reopened at the start of the next.
 * Blocks do not depend on how the text was cut into deltas.
 */
export function createBlockChunker(options: BlockChunkerOptions = {}): BlockChunker {
  const { minChars = 800, maxChars = 1200 } = options;
  if (!Number.isInteger(minChars) || !Number.isInteger(maxChars) || minChars < 1 || maxChars < minChars) {
    throw new RuntimeError(
      'invalid_input',
      `invalid block sizes: minChars ${minChars}, maxChars ${maxChars}`,
      {
        details: { minChars, maxChars },
      },
    );
  }
  let buffer = '';
  let atLineStart = true;
  let pendingTrim: PendingTrim = 'lines';
  // Positions before this were already searched for a paragraph break.
  let searchedTo = 0;

  // Drop the whitespace a break left at the start of the buffer; false while that whitespace may still grow.
  const applyPendingTrim = (): boolean => {
    if (pendingTrim === 'none') return true;
    const run = /^\s*/.exec(buffer)?.[0].length ?? 0;
    if (run === buffer.length) return false;
    const lastNewline = buffer.lastIndexOf('\n', run - 1);
    const cut = lastNewline !== -1 && run > 0 ? lastNewline + 1 : pendingTrim === 'inline' ? run : 0;
    if (lastNewline !== -1 && run > 0) atLineStart = true;
    buffer = buffer.slice(cut);
    pendingTrim = 'none';
    searchedTo = Math.max(0, searchedTo - cut);
    return true;
  };

  // The break to take now, or undefined when more text could still change the choice.
  const nextBreak = (final: boolean): Break | undefined => {
    if (final)
      return buffer.length > maxChars ? findBreak(buffer, atLineStart, minChars, maxChars, true) : undefined;
    if (buffer.length >= maxChars + 2) return findBreak(buffer, atLineStart, minChars, maxChars, true);
    // Below that only a paragraph break can be final: nothing better can come after it.
    const found = buffer.indexOf('\n\n', Math.max(minChars - 1, searchedTo));
    searchedTo = Math.max(searchedTo, buffer.length - 1);
    if (found === -1 || found > maxChars) return undefined;
    return findBreak(buffer, atLineStart, minChars, maxChars, false);
  };

  const drain = (final: boolean): string[] => {
    const blocks: string[] = [];
    while (applyPendingTrim() && buffer.length >= minChars) {
      const chosen = nextBreak(final);
      if (chosen === undefined) break;
      const split = splitAt(buffer, chosen);
      if (split.block.trim() !== '') blocks.push(split.block);
      atLineStart = chosen.fence !== undefined || startsLine(buffer, chosen);
      buffer = split.rest;
      pendingTrim = split.trim;
      searchedTo = 0;
    }
    return blocks;
  };

  return {
    push(delta) {
      buffer += delta;
      return buffer.length < minChars ? [] : drain(false);
    },
    flush() {
      const blocks = drain(true);
      applyPendingTrim();
      const last = buffer.trimEnd();
      if (last.trim() !== '') blocks.push(last);
      buffer = '';
      atLineStart = true;
      pendingTrim = 'lines';
      searchedTo = 0;
      return blocks;
    },
  };
}

/** Find the best break in `text`; when `complete` is false, only a paragraph break is returned. */
function findBreak(
  text: string,
  atLineStart: boolean,
  minChars: number,
  maxChars: number,
  complete: boolean,
): Break | undefined {
  const guards = scanBreakGuards(text, maxChars, atLineStart);
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
    if (kind === 'paragraph') break;
  }
  if (!complete) return found.get('paragraph');
  for (const kind of softKinds) {
    const chosen = found.get(kind);
    if (chosen !== undefined) return chosen;
  }
  return fallbackBreak(text, atLineStart, { minChars, maxChars }, guards, found.get('fence-line'));
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
  sizes: { readonly minChars: number; readonly maxChars: number },
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
  return fence !== undefined && index > fence.openEnd && fence.opener.length + 1 < minChars;
}

/** Cut `text` at a break into the block to emit and the text left for the next one. */
function splitAt(text: string, chosen: Break): Split {
  const head = text.slice(0, chosen.index);
  if (chosen.fence !== undefined) {
    // A fence split at a line end drops that newline; a hard split keeps the rest of the line.
    const restStart = chosen.kind === 'fence-line' ? chosen.index + 1 : chosen.index;
    const block = `${chosen.kind === 'fence-line' ? head.trimEnd() : head}\n${chosen.fence.closer}`;
    return { block, rest: `${chosen.fence.opener}\n${text.slice(restStart)}`, trim: 'none' };
  }
  switch (chosen.kind) {
    case 'paragraph':
    case 'newline':
      return { block: head.trimEnd(), rest: text.slice(chosen.index + 1), trim: 'lines' };
    case 'sentence':
    case 'whitespace':
      return { block: head.trimEnd(), rest: text.slice(chosen.index), trim: 'inline' };
    case 'fence-line':
    case 'hard':
      return { block: head.trimEnd(), rest: text.slice(chosen.index), trim: 'none' };
  }
}

/** True when the text after a (non-fence) break begins a line, ignoring indentation before the break. */
function startsLine(text: string, chosen: Break): boolean {
  if (chosen.kind === 'paragraph' || chosen.kind === 'newline') return true;
  let index = chosen.index;
  while (index > 0 && (text[index - 1] === ' ' || text[index - 1] === '\t')) index--;
  return index === 0 ? false : text[index - 1] === '\n';
}
