import { describe, expect, it } from 'vitest';
import {
  buildCollectPrompt,
  buildDroppedNotice,
  canMerge,
  summarizeMessage,
  takeCollectBatch,
} from '../../src/policies/collect-prompt.js';

describe('buildCollectPrompt', () => {
  it('numbers each message under the header when several are queued', () => {
    const prompt = buildCollectPrompt([{ text: 'first' }, { text: 'second\nline two' }]);
    expect(prompt).toBe(
      '[Queued messages while agent was busy]\n\n---\nQueued #1\nfirst\n\n---\nQueued #2\nsecond\nline two',
    );
  });

  it('uses the same format when only one message is queued', () => {
    expect(buildCollectPrompt([{ text: 'only' }])).toBe(
      '[Queued messages while agent was busy]\n\n---\nQueued #1\nonly',
    );
  });

  it('prepends the dropped notice when the cap summarised messages', () => {
    const prompt = buildCollectPrompt([{ text: 'kept' }], { dropped: ['hello there', 'are you up?'] });
    expect(prompt).toBe(
      'Dropped 2 message(s) due to cap:\n- hello there\n- are you up?\n\n' +
        '[Queued messages while agent was busy]\n\n---\nQueued #1\nkept',
    );
  });

  it('adds no notice when the dropped list is empty', () => {
    expect(buildCollectPrompt([{ text: 'a' }], { dropped: [] })).toBe(buildCollectPrompt([{ text: 'a' }]));
  });
});

describe('buildDroppedNotice', () => {
  it('lists one summary per line when messages were dropped', () => {
    expect(buildDroppedNotice(['one'])).toBe('Dropped 1 message(s) due to cap:\n- one');
  });

  it('returns an empty string when nothing was dropped', () => {
    expect(buildDroppedNotice([])).toBe('');
  });

  it('counts the unlisted messages in the total and ends with how many more when some were omitted', () => {
    expect(buildDroppedNotice(['one', 'two'], 8)).toBe(
      'Dropped 10 message(s) due to cap:\n- one\n- two\n- … and 8 more',
    );
  });
});

describe('summarizeMessage', () => {
  it('collapses whitespace and newlines into single spaces when the text spans lines', () => {
    expect(summarizeMessage('  hello\n\n  world\tagain  ')).toBe('hello world again');
  });

  it('keeps text of exactly max characters when it fits', () => {
    const text = 'a'.repeat(160);
    expect(summarizeMessage(text)).toBe(text);
  });

  it('cuts to max-1 characters plus an ellipsis when the text is longer', () => {
    const summary = summarizeMessage('b'.repeat(161));
    expect(summary).toBe(`${'b'.repeat(159)}…`);
    expect(summary).toHaveLength(160);
  });

  it('honours a custom max when one is given', () => {
    expect(summarizeMessage('abcdefghij', 5)).toBe('abcd…');
  });

  it('does not split a surrogate pair when the cut falls inside an emoji', () => {
    expect(summarizeMessage('abc😀def', 5)).toBe('abc…');
  });
});

describe('canMerge', () => {
  it('allows merging when channel and thread match', () => {
    expect(canMerge({ channel: 'telegram', thread: 't1' }, { channel: 'telegram', thread: 't1' })).toBe(true);
    expect(canMerge({}, {})).toBe(true);
  });

  it('refuses merging when channels differ', () => {
    expect(canMerge({ channel: 'telegram' }, { channel: 'discord' })).toBe(false);
  });

  it('refuses merging when threads differ or only one has a thread', () => {
    expect(canMerge({ channel: 'slack', thread: 'a' }, { channel: 'slack', thread: 'b' })).toBe(false);
    expect(canMerge({ channel: 'slack', thread: 'a' }, { channel: 'slack' })).toBe(false);
  });
});

describe('takeCollectBatch', () => {
  it('takes the whole queue when every item shares the origin', () => {
    const queue = [
      { id: 1, channel: 'telegram' },
      { id: 2, channel: 'telegram' },
    ];
    expect(takeCollectBatch(queue)).toEqual({ batch: queue, rest: [] });
  });

  it('stops at the first item from another thread when origins change', () => {
    const queue = [
      { id: 1, channel: 'slack', thread: 'a' },
      { id: 2, channel: 'slack', thread: 'a' },
      { id: 3, channel: 'slack', thread: 'b' },
      { id: 4, channel: 'slack', thread: 'a' },
    ];
    const { batch, rest } = takeCollectBatch(queue);
    expect(batch.map((item) => item.id)).toEqual([1, 2]);
    expect(rest.map((item) => item.id)).toEqual([3, 4]);
  });

  it('returns empty lists when the queue is empty', () => {
    expect(takeCollectBatch([])).toEqual({ batch: [], rest: [] });
  });
});
