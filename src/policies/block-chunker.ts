import { RuntimeError } from '../core/index.js';
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

/** The state of one chunker: the text not yet emitted and what the last break left to do. */
class Chunker implements BlockChunker {
  private buffer = '';
  private atLineStart = true;
  private pendingTrim: PendingTrim = 'lines';
  // Positions before this were already searched for a paragraph break.
  private searchedTo = 0;

  constructor(private readonly sizes: { readonly minChars: number; readonly maxChars: number }) {}

  push(delta: string): string[] {
    this.buffer += delta;
    return this.buffer.length < this.sizes.minChars ? [] : this.drain(false);
  }

  flush(): string[] {
    const blocks = this.drain(true);
    this.applyPendingTrim();
    const last = this.buffer.trimEnd();
    if (last.trim() !== '') blocks.push(last);
    this.buffer = '';
    this.atLineStart = true;
    this.pendingTrim = 'lines';
    this.searchedTo = 0;
    return blocks;
  }

  // Drop the whitespace a break left at the start of the buffer; false while that whitespace may still grow.
  private applyPendingTrim(): boolean {
    if (this.pendingTrim === 'none') return true;
    const buffer = this.buffer;
    const run = /^\s*/.exec(buffer)?.[0].length ?? 0;
    if (run === buffer.length) return false;
    const lastNewline = buffer.lastIndexOf('\n', run - 1);
    const cut = lastNewline !== -1 && run > 0 ? lastNewline + 1 : this.pendingTrim === 'inline' ? run : 0;
    if (lastNewline !== -1 && run > 0) this.atLineStart = true;
    this.buffer = buffer.slice(cut);
    this.pendingTrim = 'none';
    this.searchedTo = Math.max(0, this.searchedTo - cut);
    return true;
  }

  // The break to take now, or undefined when more text could still change the choice.
  private nextBreak(final: boolean): Break | undefined {
    const { buffer, atLineStart, sizes } = this;
    if (final)
      return buffer.length > sizes.maxChars ? findBreak(buffer, atLineStart, sizes, 'final') : undefined;
    if (buffer.length >= sizes.maxChars + 2) return findBreak(buffer, atLineStart, sizes, 'complete');
    // Below that only a paragraph break can be final: nothing better can come after it.
    const found = buffer.indexOf('\n\n', Math.max(sizes.minChars - 1, this.searchedTo));
    this.searchedTo = Math.max(this.searchedTo, buffer.length - 1);
    if (found === -1 || found > sizes.maxChars) return undefined;
    return findBreak(buffer, atLineStart, sizes, 'paragraph');
  }

  private drain(final: boolean): string[] {
    const blocks: string[] = [];
    while (this.applyPendingTrim() && this.buffer.length >= this.sizes.minChars) {
      const chosen = this.nextBreak(final);
      if (chosen === undefined) break;
      const split = splitAt(this.buffer, chosen);
      if (split.block.trim() !== '') blocks.push(split.block);
      this.atLineStart = split.atLineStart;
      this.buffer = split.rest;
      this.pendingTrim = split.trim;
      this.searchedTo = 0;
    }
    return blocks;
  }
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
  return new Chunker({ minChars, maxChars });
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
