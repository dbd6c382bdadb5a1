import { describe, expect, it } from 'vitest';
import {
  decideCap,
  dropSummaryLimit,
  keepDropSummary,
  type DropSummaries,
} from '../../src/policies/queue-cap.js';

describe('decideCap', () => {
  it('accepts without dropping when the queue is below cap', () => {
    expect(decideCap(19, { cap: 20, drop: 'new' })).toEqual({ accept: true, drop: 0, summarize: false });
    expect(decideCap(0, { cap: 1, drop: 'summarize' })).toEqual({ accept: true, drop: 0, summarize: false });
  });

  it('refuses the newcomer with queue_full when the queue is full and drop is new', () => {
    expect(decideCap(20, { cap: 20, drop: 'new' })).toEqual({ accept: false, code: 'queue_full' });
  });

  it('drops the oldest without a summary when the queue is full and drop is old', () => {
    expect(decideCap(20, { cap: 20, drop: 'old' })).toEqual({ accept: true, drop: 1, summarize: false });
  });

  it('drops the oldest keeping a summary when the queue is full and drop is summarize', () => {
    expect(decideCap(20, { cap: 20, drop: 'summarize' })).toEqual({ accept: true, drop: 1, summarize: true });
  });

  it('treats a queue over cap as full when the cap was lowered', () => {
    expect(decideCap(25, { cap: 20, drop: 'old' })).toEqual({ accept: true, drop: 1, summarize: false });
    expect(decideCap(25, { cap: 20, drop: 'new' })).toEqual({ accept: false, code: 'queue_full' });
  });
});

describe('keepDropSummary', () => {
  it('keeps the first limit lines and counts the later ones when more summaries arrive than the limit', () => {
    let summaries: DropSummaries = { kept: [], omitted: 0 };
    for (const line of ['a', 'b', 'c', 'd', 'e']) summaries = keepDropSummary(summaries, line, 2);
    expect(summaries).toEqual({ kept: ['a', 'b'], omitted: 3 });
  });

  it('keeps every line when the limit is not reached', () => {
    expect(keepDropSummary({ kept: ['a'], omitted: 0 }, 'b', 20)).toEqual({ kept: ['a', 'b'], omitted: 0 });
  });

  it('keeps dropSummaryLimit lines when no limit is given', () => {
    let summaries: DropSummaries = { kept: [], omitted: 0 };
    for (let index = 0; index < dropSummaryLimit + 5; index++)
      summaries = keepDropSummary(summaries, `${index}`);
    expect(summaries.kept).toHaveLength(dropSummaryLimit);
    expect(summaries.kept[0]).toBe('0');
    expect(summaries.omitted).toBe(5);
  });
});
