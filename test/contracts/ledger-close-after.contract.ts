import { describe, expect, it } from 'vitest';
import type { Ledger, RunClose } from '../../src/ledger/index.js';
import { type CurrentLedger, run, turn } from './ledger-fixtures.contract.js';

const close: RunClose = {
  status: 'completed',
  endedAt: 300,
  text: 'done',
  usage: { inputTokens: 1, outputTokens: 2 },
};

/** A turn no ledger takes: its content is missing (the turns table refuses it, NOT NULL). */
const refused = (sessionKey: string, runId: string, index: number) =>
  turn(sessionKey, runId, index, { content: null as unknown as string });

/** What `promise` failed with (a test fails when it resolves). */
async function failureOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as Error,
  );
}

/** `ledger.closesWith`, which a ledger of this suite must answer. */
function closesWith(ledger: Ledger, writes: readonly Promise<void>[]): boolean {
  if (ledger.closesWith === undefined) throw new Error('the ledger does not answer closesWith');
  return ledger.closesWith(writes);
}

/**
 * A run's close tied to its opening and turns (`RunCloseOptions.after`, `Ledger.closesWith`), for the ledgers that
 * take it without waiting for them: it commits with them, or fails, unwritten, with the error of one that failed.
 */
export function describeCloseAfterContract(current: CurrentLedger): void {
  describe('a run close tied to its writes', () => {
    it('commits a close called with its opening and turns still pending, tied to them', async () => {
      const ledger = current();
      const opened = ledger.openRun(run('s1', 'r1'));
      const turns = ledger.appendTurns([turn('s1', 'r1', 0), turn('s1', 'r1', 1)]);
      expect(closesWith(ledger, [opened, turns])).toBe(true);
      await ledger.closeRun('r1', close, { after: [opened, turns] });
      await Promise.all([opened, turns]);
      expect(closesWith(ledger, [opened, turns])).toBe(true);
      expect(await ledger.getRun('r1')).toMatchObject({ status: 'completed', text: 'done' });
      expect((await ledger.listRunTurns('r1')).map((stored) => stored.index)).toEqual([0, 1]);
    });

    it('fails a close tied to a turn refused in its transaction, with that error, and commits the others', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      await ledger.openRun(run('s2', 'r2'));
      const lost = ledger.appendTurns([refused('s1', 'r1', 0)]);
      const kept = ledger.appendTurns([turn('s2', 'r2', 0)]);
      // Not failed yet: the turn is refused as its transaction writes it.
      expect(closesWith(ledger, [lost])).toBe(true);
      const tied = ledger.closeRun('r1', close, { after: [lost] });
      const other = ledger.closeRun('r2', close, { after: [kept] });
      const [turnError, closeError] = await Promise.all([failureOf(lost), failureOf(tied)]);
      await Promise.all([kept, other]);
      expect(closeError.message).toBe(turnError.message);
      expect(await ledger.getRun('r1')).toMatchObject({ status: 'running' });
      expect(await ledger.getRun('r2')).toMatchObject({ status: 'completed' });
      expect(await ledger.listRunTurns('r1')).toEqual([]);
      expect(closesWith(ledger, [lost])).toBe(false);
    });

    it('fails a close tied to a write that failed in an earlier transaction, and leaves the run open', async () => {
      const ledger = current();
      await ledger.openRun(run('s1', 'r1'));
      const lost = ledger.appendTurns([refused('s1', 'r1', 0)]);
      const turnError = await failureOf(lost);
      const closeError = await failureOf(ledger.closeRun('r1', close, { after: [lost] }));
      expect(closeError.message).toBe(turnError.message);
      expect(await ledger.getRun('r1')).toMatchObject({ status: 'running' });
    });

    it('does not answer for a write it did not hand out', async () => {
      const ledger = current();
      expect(closesWith(ledger, [Promise.resolve()])).toBe(false);
      expect(closesWith(ledger, [])).toBe(true);
      // A close tied to nothing is any close.
      await ledger.openRun(run('s1', 'r1'));
      await ledger.closeRun('r1', close, { after: [] });
      expect(await ledger.getRun('r1')).toMatchObject({ status: 'completed' });
    });
  });
}
