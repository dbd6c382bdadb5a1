import { describe, expect, it } from 'vitest';
import {
  dedupeMaxIds,
  dedupeWindowMs,
  isDuplicate,
  rememberMessage,
  type SeenMessage,
} from '../../src/policies/queue-admission.js';

describe('dedupeWindowMs', () => {
  it('is five minutes when not configured', () => {
    expect(dedupeWindowMs).toBe(300_000);
  });
});

describe('isDuplicate', () => {
  const seen = [['m1', 1_000]] as const;

  it('reports a duplicate when the id was accepted 4:59.999 ago', () => {
    expect(isDuplicate(seen, 'm1', 1_000 + 299_999)).toBe(true);
  });

  it('reports no duplicate when the id was accepted exactly 5:00 ago', () => {
    expect(isDuplicate(seen, 'm1', 1_000 + 300_000)).toBe(false);
  });

  it('reports no duplicate when the id was never accepted', () => {
    expect(isDuplicate(seen, 'm2', 1_001)).toBe(false);
  });

  it('uses the given window when one is passed', () => {
    expect(isDuplicate(seen, 'm1', 1_999, 1_000)).toBe(true);
    expect(isDuplicate(seen, 'm1', 2_000, 1_000)).toBe(false);
  });
});

describe('rememberMessage', () => {
  it('appends the id with its time when the list is empty', () => {
    expect(rememberMessage([], 'm1', 5_000)).toEqual([['m1', 5_000]]);
  });

  it('prunes entries 5:00 or older when it appends', () => {
    const seen = [
      ['old', 0],
      ['recent', 1],
    ] as const;
    expect(rememberMessage(seen, 'new', 300_000)).toEqual([
      ['recent', 1],
      ['new', 300_000],
    ]);
  });

  it('returns a new array and leaves the input untouched when it remembers', () => {
    const seen: [string, number][] = [['m1', 0]];
    const next = rememberMessage(seen, 'm2', 10);
    expect(next).not.toBe(seen);
    expect(seen).toEqual([['m1', 0]]);
  });

  it('keeps one entry per id when an id is remembered again', () => {
    const seen = rememberMessage(rememberMessage([], 'm1', 0), 'm1', 100_000);
    expect(seen).toEqual([['m1', 100_000]]);
    expect(isDuplicate(seen, 'm1', 399_999)).toBe(true);
  });

  it('round-trips through JSON when stored in a snapshot', () => {
    const seen = rememberMessage([['a', 1]], 'b', 2);
    expect(JSON.parse(JSON.stringify(seen))).toEqual(seen);
  });
});

describe('dedupeMaxIds', () => {
  it('keeps only the latest 1000 ids when more arrive inside the window', () => {
    let seen: SeenMessage[] = [];
    for (let index = 0; index < 1001; index++) seen = rememberMessage(seen, `m${index}`, index);
    expect(seen).toHaveLength(dedupeMaxIds);
    expect(seen[0]).toEqual(['m1', 1]);
    expect(isDuplicate(seen, 'm0', 1001)).toBe(false);
    expect(isDuplicate(seen, 'm1', 1001)).toBe(true);
  });
});
