import { RuntimeError } from '../core/errors.js';
import { findBreak, splitAt } from './block-breaks.js';
import type { Break, PendingTrim } from './block-breaks.js';

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
  const sizes = { minChars, maxChars };
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
    if (final) return buffer.length > maxChars ? findBreak(buffer, atLineStart, sizes, 'final') : undefined;
    if (buffer.length >= maxChars + 2) return findBreak(buffer, atLineStart, sizes, 'complete');
    // Below that only a paragraph break can be final: nothing better can come after it.
    const found = buffer.indexOf('\n\n', Math.max(minChars - 1, searchedTo));
    searchedTo = Math.max(searchedTo, buffer.length - 1);
    if (found === -1 || found > maxChars) return undefined;
    return findBreak(buffer, atLineStart, sizes, 'paragraph');
  };

  const drain = (final: boolean): string[] => {
    const blocks: string[] = [];
    while (applyPendingTrim() && buffer.length >= minChars) {
      const chosen = nextBreak(final);
      if (chosen === undefined) break;
      const split = splitAt(buffer, chosen);
      if (split.block.trim() !== '') blocks.push(split.block);
      atLineStart = split.atLineStart;
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

/**
 * How many blocks a run emitted for these assistant texts, one per model call (each call has its own chunker,
 * flushed at its end). A resumed run numbers its blocks on from here, so `<runId>:<index>` stays unique.
 */
export function countBlocks(texts: readonly string[], options: BlockChunkerOptions = {}): number {
  let count = 0;
  for (const text of texts) {
    const chunker = createBlockChunker(options);
    count += chunker.push(text).length + chunker.flush().length;
  }
  return count;
}
