import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from '../../src/core/errors.js';
import { createBlockChunker } from '../../src/policies/block-chunker.js';
import type { BlockChunkerOptions } from '../../src/policies/block-chunker.js';

/** Feed `text` in deltas of `step` characters (one delta when omitted), then flush. */
function chunk(text: string, options: BlockChunkerOptions = {}, step = text.length || 1): string[] {
  const chunker = createBlockChunker(options);
  const blocks: string[] = [];
  for (let start = 0; start < text.length; start += step)
    blocks.push(...chunker.push(text.slice(start, start + step)));
  return [...blocks, ...chunker.flush()];
}

// Paragraphs of 300 chars, each with a newline at 249, separated by blank lines.
const paragraph = `${'abcdefghi '.repeat(24)}abcdefghi\n${'y'.repeat(50)}`;
const paragraphs = Array.from({ length: 7 }, () => paragraph).join('\n\n');

describe('createBlockChunker', () => {
  it('emits nothing until flush when the text is shorter than minChars', () => {
    const chunker = createBlockChunker();
    expect(chunker.push('Hello ')).toEqual([]);
    expect(chunker.push('world.\n')).toEqual([]);
    expect(chunker.flush()).toEqual(['Hello world.']);
  });

  it('returns no block on flush when nothing or only whitespace was pushed', () => {
    expect(createBlockChunker().flush()).toEqual([]);
    const chunker = createBlockChunker();
    chunker.push(' \n\n ');
    expect(chunker.flush()).toEqual([]);
  });

  it('starts afresh when it is reused after flush', () => {
    const chunker = createBlockChunker();
    chunker.push('first');
    expect(chunker.flush()).toEqual(['first']);
    chunker.push('second');
    expect(chunker.flush()).toEqual(['second']);
  });

  it('breaks at the first paragraph break past 800 even when a newline comes earlier', () => {
    // Paragraph breaks at 300, 602, 904; newlines at 249, 551, 853.
    const blocks = chunk(paragraphs, {}, 5);
    expect(paragraphs).toHaveLength(2112);
    expect(blocks.map((block) => block.length)).toEqual([904, 904, 300]);
    expect(blocks[0]).toBe([paragraph, paragraph, paragraph].join('\n\n'));
    expect(blocks[2]).toBe(paragraph);
  });

  it('emits a paragraph block as soon as the blank line arrives when below maxChars', () => {
    const chunker = createBlockChunker();
    expect(chunker.push(paragraphs.slice(0, 905))).toEqual([]);
    expect(chunker.push(paragraphs.slice(905, 906))).toEqual([paragraphs.slice(0, 904)]);
  });

  it('breaks at the first newline past 800 when there is no paragraph break', () => {
    // Lines of 39 chars: newlines at 39, 79, …, 839.
    const lines = Array.from(
      { length: 60 },
      (_, index) => `line ${String(index).padStart(2, '0')} ${'w'.repeat(31)}`,
    );
    const blocks = chunk(lines.join('\n'), {}, 3);
    expect(blocks.map((block) => block.length)).toEqual([839, 839, 719]);
    expect(blocks[0]).toBe(lines.slice(0, 21).join('\n'));
    expect(blocks[1]?.startsWith('line 21 ')).toBe(true);
  });

  it('breaks after a sentence end when there is no newline', () => {
    // Sentences 0–9 take 20 chars with their ". ", 10–79 take 21: sentence 38 ends at 200 + 28 × 21 + 20 = 808.
    const text = Array.from({ length: 80 }, (_, index) => `Sentence ${index} is here`).join('. ');
    const blocks = chunk(text, {}, 11);
    expect(blocks.map((block) => block.length)).toEqual([808, 859]);
    expect(blocks[0]).toBe(text.slice(0, 808));
    expect(blocks[0]?.endsWith('. Sentence 38 is here.')).toBe(true);
    expect(blocks[1]?.startsWith('Sentence 39 is here.')).toBe(true);
  });

  it('breaks at whitespace when there is no sentence end', () => {
    const blocks = chunk('abcd '.repeat(600));
    expect(blocks.map((block) => block.length)).toEqual([804, 804, 804, 584]);
    expect(blocks[0]).toBe('abcd '.repeat(161).trimEnd());
  });

  it('hard-breaks at 1200 when there is no whitespace', () => {
    const blocks = chunk('x'.repeat(3000), {}, 13);
    expect(blocks.map((block) => block.length)).toEqual([1200, 1200, 600]);
  });

  it('closes a long code fence and reopens it with its info string when it exceeds maxChars', () => {
    // Lines of 27 chars after a 6-char opening line: line ends at 33, 61, …, 817.
    const lines = Array.from(
      { length: 60 },
      (_, index) => `const v${String(index).padStart(2, '0')} = 11111111111111;`,
    );
    const text = `\`\`\`ts\n${lines.join('\n')}\n\`\`\`\nafter`;
    const blocks = chunk(text, {}, 4);
    expect(blocks).toEqual([
      `\`\`\`ts\n${lines.slice(0, 29).join('\n')}\n\`\`\``,
      `\`\`\`ts\n${lines.slice(29).join('\n')}\n\`\`\`\nafter`,
    ]);
    expect(blocks.map((block) => block.length)).toEqual([821, 883]);
  });

  it('closes and reopens a fence with a hard break when a fence line is longer than maxChars', () => {
    const text = `\`\`\`\n${'z'.repeat(2000)}\n\`\`\``;
    const blocks = chunk(text, {}, 9);
    expect(blocks).toEqual([`\`\`\`\n${'z'.repeat(1196)}\n\`\`\``, `\`\`\`\n${'z'.repeat(804)}\n\`\`\``]);
  });

  it('keeps a short code fence whole when it straddles the 800 mark', () => {
    const prose = `${'word '.repeat(149)}word`;
    const fence = `\`\`\`ts\n${'let a = 1;\n'.repeat(10)}\n${'let b = 2;\n'.repeat(10)}\`\`\``;
    const tail = 'tail words '.repeat(60);
    const blocks = chunk(`${prose}\n${fence}\n${tail}`, {}, 6);
    // The blank line inside the fence (near 867) is no paragraph break; the first break is after the fence.
    expect(blocks).toEqual([`${prose}\n${fence}`, tail.trim()]);
  });

  it('breaks before a fence when the fence would not fit after minChars', () => {
    const prose = `${'word '.repeat(169)}word`;
    const fence = `\`\`\`\n${'code line\n'.repeat(50)}\`\`\``;
    const blocks = chunk(`${prose}\n${fence}`, {}, 10);
    expect(blocks[0]).toBe(prose);
    expect(blocks[1]).toBe(fence);
  });

  it('uses the given sizes when options are passed', () => {
    const blocks = chunk('One two three. Four five six seven. Eight nine ten eleven twelve.', {
      minChars: 10,
      maxChars: 20,
    });
    // The earliest boundary at or after minChars wins within its kind: "Eight nine" ends at 10.
    expect(blocks).toEqual(['One two three.', 'Four five six seven.', 'Eight nine', 'ten eleven twelve.']);
  });

  it('throws invalid_input when maxChars is below minChars or minChars is below 1', () => {
    expect(() => createBlockChunker({ minChars: 100, maxChars: 50 })).toThrow(
      expect.objectContaining({ code: 'invalid_input' }),
    );
    let caught: unknown;
    try {
      createBlockChunker({ minChars: 0 });
    } catch (error) {
      caught = error;
    }
    expect(isRuntimeError(caught, 'invalid_input')).toBe(true);
  });
});

const fenceLine = /^\s*```/;

/** Text with fence lines removed and all whitespace dropped: what every chunking must preserve. */
function essence(text: string): string {
  return text
    .split('\n')
    .filter((line) => !fenceLine.test(line))
    .join('\n')
    .replace(/\s+/g, '');
}

const word = fc.stringMatching(/^[a-z]{1,12}$/);
const longWord = fc.integer({ min: 20, max: 150 }).map((length) => 'x'.repeat(length));
const separator = fc.constantFrom(' ', ' ', ' ', '\n', '\n\n', '. ', '! ', '? ', '\t', '  ');
const codeLine = fc.array(fc.oneof(word, fc.constant(' ')), { maxLength: 10 }).map((parts) => parts.join(''));
const fence = fc
  .tuple(fc.constantFrom('ts', 'python', ''), fc.array(codeLine, { maxLength: 30 }))
  .map(([info, lines]) => `\n\`\`\`${info}\n${lines.join('\n')}\n\`\`\`\n`);
const text = fc
  .array(fc.oneof({ arbitrary: word, weight: 10 }, { arbitrary: separator, weight: 8 }, longWord, fence), {
    maxLength: 120,
  })
  .map((parts) => parts.join(''));
const sizes = fc
  .tuple(fc.integer({ min: 20, max: 80 }), fc.integer({ min: 0, max: 60 }))
  .map(([minChars, span]) => ({ minChars, maxChars: minChars + span }));

describe('createBlockChunker properties', () => {
  it('keeps every block within maxChars plus a fence close when texts are random', () => {
    fc.assert(
      fc.property(text, sizes, (input, options) => {
        for (const block of chunk(input, options)) {
          expect(block.length).toBeLessThanOrEqual(options.maxChars + '\n```'.length);
          expect(block.trim()).not.toBe('');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('preserves the content when blocks are joined', () => {
    fc.assert(
      fc.property(text, sizes, (input, options) => {
        expect(essence(chunk(input, options).join('\n'))).toBe(essence(input));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves every code fence balanced in each block when the text closes its fences', () => {
    fc.assert(
      fc.property(text, sizes, (input, options) => {
        for (const block of chunk(input, options)) {
          const fences = block.split('\n').filter((line) => fenceLine.test(line));
          expect(fences.length % 2).toBe(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('produces the same blocks whatever the delta sizes', () => {
    fc.assert(
      fc.property(text, sizes, fc.integer({ min: 1, max: 40 }), (input, options, step) => {
        expect(chunk(input, options, step)).toEqual(chunk(input, options));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the default sizes between 800 and 1200 when paragraphs are random', () => {
    // One separator between words, so a boundary trims at most two whitespace characters.
    const prose = fc
      .array(fc.tuple(word, fc.constantFrom(' ', ' ', '\n\n', '. ')), { minLength: 300, maxLength: 700 })
      .map((pairs) => pairs.flat().join(''));
    fc.assert(
      fc.property(prose, (input) => {
        const blocks = chunk(input, {}, 7);
        for (const block of blocks.slice(0, -1)) {
          expect(block.length).toBeGreaterThanOrEqual(798);
          expect(block.length).toBeLessThanOrEqual(1200);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('ends and ignores delta sizes when texts are full of stray fence characters', () => {
    const piece = fc.constantFrom(
      'a',
      'b',
      ' ',
      '\n',
      '`',
      '```',
      '```ts',
      '~~~',
      '.',
      '\t',
      '😀',
      '  ',
      '\n\n',
    );
    const noisy = fc.array(piece, { maxLength: 200 }).map((pieces) => pieces.join(''));
    const tiny = fc
      .tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 20 }))
      .map(([minChars, span]) => ({ minChars, maxChars: minChars + span }));
    fc.assert(
      fc.property(noisy, tiny, fc.integer({ min: 1, max: 10 }), (input, options, step) => {
        expect(chunk(input, options, step)).toEqual(chunk(input, options));
      }),
      { numRuns: 1000 },
    );
  });
});
