import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import type { Ledger } from '../../src/ledger/contract/ledger.js';
import { describeLedgerContract } from '../contracts/ledger.contract.js';
import {
  compensation,
  errorOf,
  message,
  plan,
  run,
  stepResult,
  toolCall,
} from '../contracts/ledger-fixtures.contract.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-ledger-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const opened: Ledger[] = [];
describeLedgerContract(
  'sqlite',
  () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    opened.push(ledger);
    return ledger;
  },
  async () => {
    for (const ledger of opened.splice(0)) await ledger.close();
  },
  { closesWith: true },
);

function event(cursor: number, fields: Partial<RuntimeEvent> & Pick<RuntimeEvent, 'type'>): RuntimeEvent {
  return { sessionKey: 's1', seq: cursor, cursor, at: cursor, ...fields } as RuntimeEvent;
}

describe('createSqliteLedger', () => {
  it('keeps what was written when the file is opened again', async () => {
    const path = tempPath();
    const first = createSqliteLedger({ path });
    await first.appendMessage(message('s1', 'm1', 1));
    await first.appendEvents([event(1, { type: 'message.queued', messageId: 'm1', position: 1 })]);
    await first.close();
    const second = createSqliteLedger({ path });
    expect((await second.listMessages('s1')).map((record) => record.text)).toEqual(['text m1']);
    expect(await second.lastCursor()).toBe(1);
    await second.close();
  });

  it('refuses a second writer of the same file at once with ledger_locked', async () => {
    const path = tempPath();
    const first = createSqliteLedger({ path });
    let error: unknown;
    try {
      createSqliteLedger({ path });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'ledger_locked')).toBe(true);
    await first.close();
    const again = createSqliteLedger({ path });
    await again.close();
  });

  it('lets a reader open the file while a writer holds it', async () => {
    const path = tempPath();
    const writer = createSqliteLedger({ path });
    await writer.appendMessage(message('s1', 'm1', 1));
    const reader = createSqliteLedger({ path, readonly: true });
    expect(await reader.listSessionsWithPending()).toEqual(['s1']);
    const refused = await errorOf(
      reader.putSession({
        sessionKey: 'x',
        override: {},
        snapshot: undefined,
        epoch: 1,
        lastSeq: 0,
        updatedAt: 0,
      }),
    );
    expect(isRuntimeError(refused, 'invalid_input')).toBe(true);
    await reader.close();
    await writer.close();
  });

  it('refuses a database from a newer schema with ledger_version and leaves it untouched', () => {
    const path = tempPath();
    const raw = new Database(path);
    raw.pragma('user_version = 99');
    raw.close();
    let error: unknown;
    try {
      createSqliteLedger({ path });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'ledger_version')).toBe(true);
    const check = new Database(path);
    expect(check.pragma('user_version', { simple: true })).toBe(99);
    check.close();
  });

  it('names the table and row of a corrupt row with ledger_corrupt and keeps serving other sessions', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    for (const key of ['good', 'bad']) {
      await ledger.putSession({
        sessionKey: key,
        override: {},
        snapshot: { value: 'idle' },
        epoch: 1,
        lastSeq: 0,
        updatedAt: 0,
      });
    }
    await ledger.close();
    const raw = new Database(path);
    raw.prepare("UPDATE sessions SET snapshot = '{not json' WHERE session_key = 'bad'").run();
    raw
      .prepare(
        "INSERT INTO inbox (session_key, ord, message_id, text, mode, status, accepted_at) VALUES ('bad', 1, 'm', 't', 'collect', 'lost', 0)",
      )
      .run();
    raw.close();
    const reopened = createSqliteLedger({ path });
    const error = await errorOf(reopened.getSession('bad'));
    expect(isRuntimeError(error, 'ledger_corrupt')).toBe(true);
    expect((error as Error).message).toContain('sessions row "bad"');
    expect(((await errorOf(reopened.listMessages('bad'))) as Error).message).toContain(
      'inbox row ("bad", 1)',
    );
    expect((await reopened.getSession('good'))?.snapshot).toEqual({ value: 'idle' });
    await reopened.close();
  });

  it('stores the token deltas of a run coalesced, one row, with the text intact', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const deltas = ['Hel', 'lo ', 'there'].map((delta, index) =>
      event(index + 1, { type: 'assistant.delta', runId: 'r1', delta }),
    );
    await ledger.appendEvents(deltas);
    await ledger.appendEvents([event(4, { type: 'assistant.final', runId: 'r1', text: 'Hello there' })]);
    expect(await ledger.runText('r1')).toBe('Hello there');
    const read = await ledger.readEvents({});
    expect(read.map((stored) => [stored.type, stored.cursor])).toEqual([
      ['assistant.delta', 3],
      ['assistant.final', 4],
    ]);
    await ledger.close();
    const raw = new Database(path);
    expect(raw.prepare("SELECT count(*) AS n FROM events WHERE type = 'assistant.delta'").get()).toEqual({
      n: 1,
    });
    raw.close();
  });

  it('commits the writes of one event-loop turn together and rejects only the failing one', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    const record = message('s1', 'm1', 1);
    const results = await Promise.allSettled([
      ledger.appendMessage(record),
      ledger.appendMessage({ ...record, messageId: 'dup' }),
      ledger.appendMessage({ ...record, messageId: 'm2', order: 2 }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await ledger.listMessages('s1')).map((stored) => stored.messageId)).toEqual(['m1', 'm2']);
    await ledger.close();
  });

  it('names the table and row of a corrupt tool call or compensation with ledger_corrupt', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.openRun({ ...run('s1', 'r1'), status: 'awaiting_approval' });
    await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0), toolCall('s1', 'r1', 1, 1)]);
    await ledger.putToolCalls([toolCall('s1', 'r2', 1, 0), toolCall('s1', 'r3', 1, 0)]);
    await ledger.putToolCalls([toolCall('s1', 'r4', 1, 0)]);
    await ledger.appendCompensation(compensation('s1', 'r1', 1));
    await ledger.appendCompensation(compensation('s1', 'r2', 1));
    await ledger.close();
    const raw = new Database(path);
    raw.prepare("UPDATE tool_calls SET args = '{not json' WHERE run_id = 'r1' AND position = 1").run();
    raw.prepare("UPDATE tool_calls SET kind = 'lost' WHERE run_id = 'r2'").run();
    raw.prepare("UPDATE tool_calls SET status = 'lost' WHERE run_id = 'r3'").run();
    raw.prepare("UPDATE compensations SET status = 'lost' WHERE run_id = 'r1'").run();
    raw.prepare("UPDATE compensations SET result = '{not json' WHERE run_id = 'r2'").run();
    raw.close();

    const reopened = createSqliteLedger({ path });
    const problems = [
      [() => reopened.listToolCalls('r1'), 'tool_calls row ("r1", 1, 1): args is not valid JSON'],
      [() => reopened.loadSession('s1'), 'tool_calls row ("r1", 1, 1): args is not valid JSON'],
      [() => reopened.listToolCalls('r2'), 'tool_calls row ("r2", 1, 0): unknown kind "lost"'],
      [() => reopened.listToolCalls('r3'), 'tool_calls row ("r3", 1, 0): unknown status "lost"'],
      [() => reopened.listCompensations('r1'), 'compensations row ("r1", 1): unknown status "lost"'],
      [() => reopened.listCompensations('r2'), 'compensations row ("r2", 1): result is not valid JSON'],
    ] as const;
    for (const [read, text] of problems) {
      const error = await errorOf(read());
      expect(isRuntimeError(error, 'ledger_corrupt')).toBe(true);
      expect((error as Error).message).toBe(text);
    }
    expect(await reopened.listToolCalls('r4')).toEqual([toolCall('s1', 'r4', 1, 0)]);
    await reopened.close();
  });

  it('names the table and row of a corrupt plan or step result with ledger_corrupt', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    for (const runId of ['r1', 'r2', 'r3', 'r4']) {
      await ledger.putPlan(plan('s1', runId));
      await ledger.putStepResult(stepResult(runId, 'fetch', 1));
    }
    await ledger.close();
    const raw = new Database(path);
    raw.prepare("UPDATE plans SET plan = '{not json' WHERE run_id = 'r1'").run();
    raw.prepare("UPDATE plans SET approved_steps = '{\"send\":true}' WHERE run_id = 'r2'").run();
    raw.prepare("UPDATE plans SET options = '{not json' WHERE run_id = 'r3'").run();
    raw.prepare("UPDATE plan_steps SET data = '{not json' WHERE run_id = 'r1'").run();
    raw
      .prepare("UPDATE plan_steps SET error_code = 'lost', error_message = 'gone' WHERE run_id = 'r2'")
      .run();
    raw.prepare("UPDATE plan_steps SET success = 2 WHERE run_id = 'r3'").run();
    raw.close();

    const reopened = createSqliteLedger({ path });
    const problems = [
      [() => reopened.getPlan('r1'), 'plans row "r1": plan is not valid JSON'],
      [() => reopened.getPlan('r2'), 'plans row "r2": approved_steps is not a list of step ids'],
      [
        () => reopened.approvePlanSteps('r2', ['send']),
        'plans row "r2": approved_steps is not a list of step ids',
      ],
      [() => reopened.getPlan('r3'), 'plans row "r3": options is not valid JSON'],
      [() => reopened.listStepResults('r1'), 'plan_steps row ("r1", "fetch"): data is not valid JSON'],
      [() => reopened.listStepResults('r2'), 'plan_steps row ("r2", "fetch"): unknown error code "lost"'],
      [() => reopened.listStepResults('r3'), 'plan_steps row ("r3", "fetch"): success is 2, not 0 or 1'],
    ] as const;
    for (const [read, text] of problems) {
      const error = await errorOf(read());
      expect(isRuntimeError(error, 'ledger_corrupt')).toBe(true);
      expect((error as Error).message).toBe(text);
    }
    expect(await reopened.getPlan('r4')).toEqual(plan('s1', 'r4'));
    expect(await reopened.listStepResults('r4')).toEqual([stepResult('r4', 'fetch', 1)]);
    await reopened.close();
  });
});
