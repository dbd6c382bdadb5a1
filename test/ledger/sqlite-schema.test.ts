import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { migrations } from '../../src/ledger/sqlite/schema.js';
import {
  compensation,
  message,
  plan,
  run,
  session,
  stepResult,
  toolCall,
  turn,
} from '../contracts/ledger-fixtures.contract.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-schema-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The schema version and the tables of the database file at `path`. */
function schemaOf(path: string): { version: unknown; tables: string[] } {
  const raw = new Database(path, { readonly: true });
  const version = raw.pragma('user_version', { simple: true });
  const rows = raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all();
  raw.close();
  return { version, tables: rows.map((row) => (row as { name: string }).name) };
}

/** What an upgraded database must look like. */
const currentSchema = {
  version: migrations.length,
  tables: [
    'auth_profiles',
    'compensations',
    'consumers',
    'deliveries',
    'event_times',
    'events',
    'inbox',
    'meta',
    'plan_steps',
    'plans',
    'runs',
    'seq_marks',
    'session_forks',
    'sessions',
    'tool_calls',
    'turns',
  ],
};

describe('migrate', () => {
  it('upgrades a version 1 database in place, keeping its data', async () => {
    const path = tempPath();
    const v1 = new Database(path);
    v1.exec(migrations[0] as string);
    v1.pragma('user_version = 1');
    v1.prepare(
      `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at)
       VALUES ('s1', '{"mode":"collect","debounceMs":1000}', ?, 1, 7, 1000)`,
    ).run(JSON.stringify(session('s1').snapshot));
    v1.prepare(
      `INSERT INTO runs (run_id, session_key, status, message_ids, provider, model, started_at, input_tokens,
         output_tokens, text) VALUES ('r1', 's1', 'running', '["m1","m2"]', 'scripted', 'test-model', 100, 0, 0, '')`,
    ).run();
    v1.prepare(
      "INSERT INTO turns (session_key, run_id, idx, role, content, at) VALUES ('s1', 'r1', 0, 'assistant', 'turn 0', 200)",
    ).run();
    v1.close();

    const ledger = createSqliteLedger({ path });
    expect(await ledger.getSession('s1')).toEqual(session('s1'));
    expect(await ledger.getSession('s1')).not.toHaveProperty('toolPolicy');
    expect(await ledger.listOpenRuns()).toEqual([run('s1', 'r1')]);
    expect(await ledger.listRunTurns('r1')).toEqual([turn('s1', 'r1', 0)]);
    await ledger.putSession(session('s1', { toolPolicy: { allow: ['search'] } }));
    await ledger.setRunStatus('r1', 'awaiting_approval');
    await ledger.putToolCalls([toolCall('s1', 'r1', 1, 0)]);
    await ledger.appendCompensation(compensation('s1', 'r1', 1));
    await ledger.close();

    const reopened = createSqliteLedger({ path });
    expect((await reopened.loadSession('s1')).paused?.calls).toEqual([toolCall('s1', 'r1', 1, 0)]);
    expect((await reopened.getSession('s1'))?.toolPolicy).toEqual({ allow: ['search'] });
    await reopened.close();
    expect(schemaOf(path)).toEqual(currentSchema);
  });

  it('upgrades a version 2 database in place, keeping its data', async () => {
    const path = tempPath();
    const v2 = new Database(path);
    for (const migration of migrations.slice(0, 2)) v2.exec(migration);
    v2.pragma('user_version = 2');
    v2.prepare(
      `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at, tool_policy)
       VALUES ('s1', '{"mode":"collect","debounceMs":1000}', ?, 1, 7, 1000, '{"allow":["search"]}')`,
    ).run(JSON.stringify(session('s1').snapshot));
    v2.prepare(
      `INSERT INTO runs (run_id, session_key, status, message_ids, provider, model, started_at, input_tokens,
         output_tokens, text) VALUES ('r1', 's1', 'awaiting_approval', '["m1","m2"]', 'scripted', 'test-model', 100, 0, 0, '')`,
    ).run();
    v2.prepare(
      `INSERT INTO tool_calls (run_id, turn, position, session_key, tool_call_id, tool, args, kind, status, requested_at)
       VALUES ('r1', 1, 0, 's1', 'call-1-0', 'search', ?, 'approval', 'pending', 310)`,
    ).run(JSON.stringify(toolCall('s1', 'r1', 1, 0).args));
    v2.close();

    const ledger = createSqliteLedger({ path });
    expect(await ledger.loadSession('s1')).toMatchObject({
      record: session('s1', { toolPolicy: { allow: ['search'] } }),
      paused: {
        run: { ...run('s1', 'r1'), status: 'awaiting_approval' },
        calls: [toolCall('s1', 'r1', 1, 0)],
      },
    });
    await ledger.putPlan(plan('s1', 'r1'));
    await ledger.approvePlanSteps('r1', ['send']);
    await ledger.putStepResult(stepResult('r1', 'fetch', 1));
    await ledger.close();

    const reopened = createSqliteLedger({ path });
    expect(await reopened.getPlan('r1')).toEqual(plan('s1', 'r1', { approvedSteps: ['send'] }));
    expect(await reopened.listStepResults('r1')).toEqual([stepResult('r1', 'fetch', 1)]);
    expect(await reopened.listToolCalls('r1')).toEqual([toolCall('s1', 'r1', 1, 0)]);
    await reopened.close();
    expect(schemaOf(path)).toEqual(currentSchema);
  });

  it('upgrades a version 10 database without the indexes nothing reads, and finds what they found', async () => {
    const path = tempPath();
    const v10 = new Database(path);
    for (const migration of migrations.slice(0, 10)) v10.exec(migration);
    v10.pragma('user_version = 10');
    expect(v10.prepare("SELECT name FROM sqlite_schema WHERE name = 'turns_by_run'").get()).toBeDefined();
    v10.close();

    const ledger = createSqliteLedger({ path });
    await ledger.appendMessage(message('s1', 'm1', 1));
    await ledger.appendMessage(message('s1', 'm2', 2));
    await ledger.appendMessage(message('s1', 'm1', 3));
    await ledger.openRun(run('s1', 'r1'));
    await ledger.appendTurns([turn('s1', 'r1', 0), turn('s2', 'r9', 0), turn('s1', 'r1', 1)]);
    await ledger.updateMessages('s1', ['m1'], { status: 'consumed', runId: 'r1' });
    expect((await ledger.listMessages('s1')).map((stored) => [stored.order, stored.status])).toEqual([
      [1, 'pending'],
      [2, 'pending'],
      [3, 'consumed'],
    ]);
    expect(await ledger.listRunTurns('r1')).toEqual([turn('s1', 'r1', 0), turn('s1', 'r1', 1)]);
    expect(await ledger.listRunTurns('r9')).toEqual([turn('s2', 'r9', 0)]);
    await ledger.close();
    const raw = new Database(path, { readonly: true });
    const indexes = raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'index'").pluck().all();
    expect(raw.pragma('user_version', { simple: true })).toBe(migrations.length);
    raw.close();
    expect(indexes).not.toContain('turns_by_run');
    expect(indexes).not.toContain('inbox_by_message');
  });

  it("upgrades a version 12 database to prune by its events' time ranges instead of an index by time", async () => {
    const path = tempPath();
    const v12 = new Database(path);
    for (const migration of migrations.slice(0, 12)) v12.exec(migration);
    v12.pragma('user_version = 12');
    const insert = v12.prepare(
      'INSERT INTO events (cursor, session_key, seq, type, run_id, at, body) VALUES (?, ?, ?, ?, NULL, ?, ?)',
    );
    const body = '{"messageId":"m","text":"a","mode":"followup","disposition":"queued"}';
    insert.run(1, 's1', 1, 'message.received', 300, body);
    insert.run(2, 's1', 2, 'message.received', 100, body);
    insert.run(3, 's1', 3, 'message.received', 700, body);
    v12.close();

    const ledger = createSqliteLedger({ path });
    expect(await ledger.pruneEvents(500)).toBe(2);
    expect((await ledger.readEvents({})).map((event) => event.cursor)).toEqual([3]);
    expect(await ledger.lastSeq?.('s1')).toBe(3);
    await ledger.close();
    const raw = new Database(path, { readonly: true });
    const indexes = raw.prepare("SELECT name FROM sqlite_schema WHERE type = 'index'").pluck().all();
    const times = raw.prepare('SELECT * FROM event_times').all();
    raw.close();
    expect(indexes).not.toContain('events_by_time');
    expect(times).toEqual([{ last_cursor: 3, first_cursor: 1, min_at: 100, max_at: 700 }]);
  });
});
