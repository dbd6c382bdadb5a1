import { describe, expect, it } from 'vitest';
import type { TurnRecord } from '../../src/ledger/index.js';
import { turnsToMessages } from '../../src/runner/transcript.js';

/** A recorded turn of session `s`, run `r`, numbered by its place. */
function turn(index: number, fields: Omit<TurnRecord, 'sessionKey' | 'runId' | 'index' | 'at'>): TurnRecord {
  return { sessionKey: 's', runId: 'r', index, at: index, ...fields };
}

describe('turnsToMessages', () => {
  it('passes a conversation without tool calls as it is, from a user turn, with attachments', () => {
    const attachments = [
      { kind: 'image', name: 'a.png', mediaType: 'image/png', sha256: 'x', size: 1 },
    ] as const;
    const turns = [
      turn(0, { role: 'assistant', content: 'cut off' }),
      turn(1, { role: 'user', content: 'hi', messageIds: ['m1'], attachments: [...attachments] }),
      turn(2, { role: 'assistant', content: 'hello' }),
      turn(3, { role: 'assistant', content: 'no calls', toolCalls: [] }),
    ] as TurnRecord[];
    expect(turnsToMessages(turns, 4)).toEqual([
      { role: 'user', content: 'hi', attachments: [...attachments] },
      { role: 'assistant', content: 'hello' },
      { role: 'assistant', content: 'no calls' },
    ]);
    expect(turnsToMessages(turns, 1)).toEqual([]);
  });

  it('still pairs tool calls with their results when there are any', () => {
    const call = { id: 'c1', name: 'lookup', args: {} };
    const lost = { id: 'c2', name: 'lookup', args: {} };
    const turns = [
      turn(0, { role: 'user', content: 'go' }),
      turn(1, { role: 'assistant', content: '', toolCalls: [call, lost] }),
      turn(2, { role: 'tool', content: 'found', toolCallId: 'c1', tool: 'lookup' }),
      turn(3, { role: 'tool', content: 'orphan', toolCallId: 'c9', tool: 'lookup' }),
    ];
    expect(turnsToMessages(turns, 10)).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: [call] },
      { role: 'tool', toolCallId: 'c1', tool: 'lookup', content: 'found' },
    ]);
  });
});
