import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inboxStatuses, type InboxStatus } from '../../src/ledger/index.js';
import { admittedMessageIds, stillToRun } from '../../src/policies/still-to-run.js';

const message = (messageId: string, status: InboxStatus) => ({
  messageId,
  status,
  text: `text ${messageId}`,
});

describe('stillToRun', () => {
  it('keeps pending messages and drops settled ones when no message was steered', () => {
    const messages = [
      message('m1', 'pending'),
      message('m2', 'consumed'),
      message('m3', 'collected'),
      message('m4', 'dropped'),
      message('m5', 'cancelled'),
      message('m6', 'pending'),
    ];
    expect(stillToRun(messages, () => new Set())).toEqual([messages[0], messages[5]]);
  });

  it('keeps a steered message no turn admitted and drops one a turn admitted', () => {
    const messages = [message('m1', 'steered'), message('m2', 'pending'), message('m3', 'steered')];
    expect(stillToRun(messages, () => new Set(['m3']))).toEqual([messages[0], messages[1]]);
  });

  it('returns the very records given, in their order', () => {
    const messages = [message('m2', 'pending'), message('m1', 'steered')];
    const kept = stillToRun(messages, () => new Set());
    expect(kept[0]).toBe(messages[0]);
    expect(kept[1]).toBe(messages[1]);
  });

  it('never asks for the admitted ids when no message was steered', () => {
    let asked = 0;
    const admitted = () => {
      asked += 1;
      return new Set<string>();
    };
    stillToRun([message('m1', 'pending'), message('m2', 'consumed')], admitted);
    expect(asked).toBe(0);
    stillToRun([message('m1', 'steered'), message('m2', 'steered'), message('m3', 'steered')], admitted);
    expect(asked).toBe(1);
  });

  it('keeps exactly the pending and the unadmitted steered messages, in order, for any inbox', () => {
    const ids = fc.constantFrom('m1', 'm2', 'm3', 'm4', 'm5', 'm6');
    const inbox = fc.array(fc.record({ messageId: ids, status: fc.constantFrom(...inboxStatuses) }), {
      maxLength: 30,
    });
    fc.assert(
      fc.property(inbox, fc.uniqueArray(ids), (messages, admittedList) => {
        const admitted = new Set(admittedList);
        const kept = stillToRun(messages, () => admitted);
        const expected = messages.filter(
          (record) =>
            record.status === 'pending' || (record.status === 'steered' && !admitted.has(record.messageId)),
        );
        expect(kept).toEqual(expected);
        // A subsequence of the input: every kept record is one given, in the order given.
        let position = -1;
        for (const record of kept) {
          const next = messages.indexOf(record, position + 1);
          expect(next).toBeGreaterThan(position);
          position = next;
        }
      }),
    );
  });
});

describe('admittedMessageIds', () => {
  it('collects the message ids of every turn when some turns carry none', () => {
    const turns = [{ messageIds: ['m1', 'm2'] }, {}, { messageIds: undefined }, { messageIds: ['m2', 'm3'] }];
    expect([...admittedMessageIds(turns)].sort()).toEqual(['m1', 'm2', 'm3']);
  });

  it('returns an empty set when there are no turns', () => {
    expect(admittedMessageIds([]).size).toBe(0);
  });
});
