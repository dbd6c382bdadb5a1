import { describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { rawRows } from '../support/sqlite-statements.js';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { message, run, turn } from '../contracts/ledger-fixtures.contract.js';

const tempPath = (): string => tempLedgerPath('run-close');

/** What a promise settled with: 'ok', or the code (or message) of its error. */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: unknown) => (isRuntimeError(error) ? error.code : String(error)),
  );
}

const completed = {
  status: 'completed',
  endedAt: 300,
  text: 'done',
  usage: { inputTokens: 1, outputTokens: 2 },
} as const;

function ended(runId: string, cursor: number): RuntimeEvent {
  const fields = { status: 'completed', text: 'done', usage: completed.usage, durationMs: 1 };
  return {
    type: 'run.ended',
    sessionKey: 's1',
    seq: cursor,
    cursor,
    at: 300,
    runId,
    ...fields,
  } as RuntimeEvent;
}

describe('the SQLite ledger closing a run with its parts in one transaction', () => {
  it('says its writes commit in call order', () => {
    const ledger = createSqliteLedger({ path: ':memory:' });
    expect(ledger.writesCommitInOrder).toBe(true);
    return ledger.close();
  });

  it('commits a run opened, answered and closed in one stretch in one transaction', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.appendMessage(message('s1', 'm1', 1));
    const outcomes = await Promise.all(
      [
        ledger.openRun(run('s1', 'r1')),
        ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' }),
        ledger.appendTurns([turn('s1', 'r1', 0)]),
        ledger.closeRun('r1', completed),
        ledger.appendEvents([ended('r1', 1)]),
      ].map(outcome),
    );
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    await ledger.close();
    expect(rawRows(path, 'SELECT run_id, status FROM runs')).toEqual([{ run_id: 'r1', status: 'completed' }]);
    expect(rawRows(path, 'SELECT run_id, idx FROM turns')).toEqual([{ run_id: 'r1', idx: 0 }]);
  });

  it('fails the whole transaction that closes a run whose turn failed alone in it: no end without its turns', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.openRun(run('s1', 'r1'));
    const broken = { ...turn('s1', 'r1', 1), content: null as unknown as string };
    const outcomes = await Promise.all(
      [
        ledger.appendTurns([turn('s1', 'r1', 0)]),
        ledger.appendTurns([broken]),
        ledger.closeRun('r1', completed),
        ledger.appendEvents([ended('r1', 1)]),
      ].map(outcome),
    );
    expect(outcomes.every((said) => said !== 'ok')).toBe(true);
    expect(outcomes[2]).toBe('internal');
    expect((await ledger.getRun('r1'))?.status).toBe('running');
    expect(await ledger.readEvents({})).toEqual([]);
    // The next transaction is a new one: the run closes with what it recorded.
    expect(await outcome(ledger.closeRun('r1', { ...completed, status: 'failed' }))).toBe('ok');
    await ledger.close();
    expect(rawRows(path, 'SELECT run_id, status FROM runs')).toEqual([{ run_id: 'r1', status: 'failed' }]);
    expect(rawRows(path, 'SELECT count(*) AS n FROM turns')).toEqual([{ n: 0 }]);
  });

  it('fails a turn alone when its run is not closed in the same transaction', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    await ledger.openRun(run('s1', 'r1'));
    const broken = { ...turn('s1', 'r1', 1), content: null as unknown as string };
    const outcomes = await Promise.all(
      [ledger.appendTurns([turn('s1', 'r1', 0)]), ledger.appendTurns([broken])].map(outcome),
    );
    expect(outcomes[0]).toBe('ok');
    expect(outcomes[1]).toMatch(/NOT NULL/);
    expect(await outcome(ledger.closeRun('r1', completed))).toBe('ok');
    expect((await ledger.getRun('r1'))?.status).toBe('completed');
    await ledger.close();
  });
});
