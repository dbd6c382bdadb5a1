import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonBodies, rawRows } from '../support/sqlite-statements.js';
import type { RuntimeEvent } from 'agentlanes';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';
import { run } from '../contracts/ledger-fixtures.contract.js';

const dirs: string[] = [];
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-write-path-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function event(cursor: number, fields: Partial<RuntimeEvent> & Pick<RuntimeEvent, 'type'>): RuntimeEvent {
  return { sessionKey: 's1', seq: cursor, cursor, at: cursor, ...fields } as RuntimeEvent;
}

describe('the SQLite ledger write path', () => {
  it('keeps the token deltas of a run one row when reads of other tables come between them', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const delta = (cursor: number, text: string): RuntimeEvent =>
      event(cursor, { type: 'assistant.delta', runId: 'r1', delta: text });
    const first = ledger.appendEvents([delta(1, 'Hel')]);
    expect(await ledger.listTurns('s1', { last: 20 })).toEqual([]);
    expect(await ledger.listMessages('s1')).toEqual([]);
    const second = ledger.appendEvents([delta(2, 'lo')]);
    await ledger.appendEvents([event(3, { type: 'assistant.final', runId: 'r1', text: 'Hello' })]);
    await Promise.all([first, second]);
    expect((await ledger.readEvents({})).map((stored) => [stored.type, stored.cursor])).toEqual([
      ['assistant.delta', 2],
      ['assistant.final', 3],
    ]);
    await ledger.close();
    expect(jsonBodies(rawRows(path, "SELECT body FROM events WHERE type = 'assistant.delta'"))).toEqual([
      // One row holds both deltas' text, with each token's cursor, seq and length (so a replay can cut it).
      { body: '{"delta":"Hello","tokens":[1,1,3,1,1,2]}' },
    ]);
  });

  it('shows a buffered token delta to a read of the event log', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    const written = ledger.appendEvents([event(1, { type: 'assistant.delta', runId: 'r1', delta: 'Hi' })]);
    expect(await ledger.runText('r1')).toBe('Hi');
    expect(await ledger.lastSeq?.('s1')).toBe(1);
    expect((await ledger.readEvents({ sessionKey: 's1' })).map((stored) => stored.cursor)).toEqual([1]);
    await written;
    await ledger.close();
  });

  it('stores a block without the id the reader derives from its run and index, and reads it back whole', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    // Three sessions: each block is a row of its own (one session's events of a transaction are one pack row).
    const derived = event(1, { type: 'assistant.block', runId: 'r1', index: 0, blockId: 'r1:0', text: 'Hi' });
    const own = event(2, {
      type: 'assistant.block',
      sessionKey: 's2',
      runId: 'r1',
      index: 1,
      blockId: 'mine',
      text: 'Yo',
    });
    const runless = event(3, {
      type: 'assistant.block',
      sessionKey: 's3',
      index: 2,
      blockId: 'undefined:2',
      text: 'No run',
    });
    await ledger.appendEvents([derived, own, runless]);
    expect(await ledger.readEvents({})).toEqual([derived, own, runless]);
    await ledger.close();
    expect(jsonBodies(rawRows(path, 'SELECT body FROM events ORDER BY cursor'))).toEqual([
      { body: '{"index":0,"text":"Hi"}' },
      { body: '{"index":1,"blockId":"mine","text":"Yo"}' },
      { body: '{"index":2,"blockId":"undefined:2","text":"No run"}' },
    ]);
  });

  it('finds the deltas of an opened run through its session, with no index of events by run', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    await ledger.openRun(run('s1', 'r1'));
    await ledger.appendEvents([
      event(1, { type: 'assistant.delta', runId: 'r1', delta: 'Hel' }),
      event(2, { type: 'assistant.delta', sessionKey: 's2', runId: 'r2', delta: 'other' }),
      event(3, { type: 'assistant.block', runId: 'r1', index: 0, blockId: 'r1:0', text: 'Hel' }),
      event(4, { type: 'assistant.delta', runId: 'r1', delta: 'lo' }),
    ]);
    expect(await ledger.runText('r1')).toBe('Hello');
    expect(await ledger.runText('r2')).toBe('other');
    await ledger.close();
    expect(
      rawRows(path, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events'"),
    ).toEqual([{ name: 'events_by_session' }]);
  });
});

describe('the SQLite ledger event rows', () => {
  it('writes the event rows of a transaction with one statement, and shows them to a read before its COMMIT', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const inserts: string[] = [];
    const probe = new Database(':memory:');
    const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
    probe.close();
    const original = prototype.run as (...args: unknown[]) => unknown;
    prototype.run = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.startsWith('INSERT INTO events')) inserts.push(this.source);
      return original.apply(this, args);
    };
    try {
      // Three sessions, so three rows (one session's events of a transaction are one pack row).
      const appended = [1, 2, 3].map((cursor) =>
        ledger.appendEvents([event(cursor, { type: 'run.started', sessionKey: `s${cursor}`, runId: 'r1' })]),
      );
      expect((await ledger.readEvents({})).map((stored) => stored.cursor)).toEqual([1, 2, 3]);
      await Promise.all(appended);
    } finally {
      prototype.run = original;
    }
    expect(inserts).toHaveLength(1);
    await ledger.close();
    expect(rawRows(path, 'SELECT cursor FROM events ORDER BY cursor')).toEqual([
      { cursor: 1 },
      { cursor: 2 },
      { cursor: 3 },
    ]);
  });

  it('fails the writes of a transaction whose event rows cannot go in, even once a read flushed them', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const good = ledger.appendEvents([event(1, { type: 'run.started', runId: 'r1' })]);
    const bad = ledger.appendEvents([
      event(2, { type: 'run.started', runId: 'r1', sessionKey: null } as unknown as Partial<RuntimeEvent> &
        Pick<RuntimeEvent, 'type'>),
    ]);
    await expect(ledger.readEvents({})).rejects.toThrow(/NOT NULL/);
    await expect(good).rejects.toThrow(/NOT NULL/);
    await expect(bad).rejects.toThrow(/NOT NULL/);
    await ledger.appendEvents([event(3, { type: 'run.started', runId: 'r1' })]);
    await ledger.close();
    expect(rawRows(path, 'SELECT cursor FROM events ORDER BY cursor')).toEqual([{ cursor: 3 }]);
  });

  it("prunes by age through the transactions' time ranges, an event stamped older than rows before it included", async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const received = (cursor: number, at: number, sessionKey = 's1'): RuntimeEvent =>
      event(cursor, {
        type: 'message.received',
        sessionKey,
        at,
        messageId: `m${cursor}`,
        text: 'a',
        mode: 'followup',
        disposition: 'queued',
      });
    await ledger.appendEvents([received(1, 100)]);
    await ledger.appendEvents([received(2, 500)]);
    // One transaction: cursor 3 stamped older than cursor 2 (a late writer's clock), cursor 4 newer.
    await ledger.appendEvents([received(3, 150, 's2'), received(4, 900)]);
    expect(await ledger.pruneEvents(200)).toBe(2);
    expect((await ledger.readEvents({})).map((stored) => stored.cursor)).toEqual([2, 4]);
    // Pruning keeps the seq of what went: a session's next seq never goes back.
    expect(await ledger.lastSeq?.('s2')).toBe(3);
    expect(await ledger.pruneEvents(600)).toBe(1);
    expect((await ledger.readEvents({})).map((stored) => stored.cursor)).toEqual([4]);
    await ledger.close();
    // One row per transaction, with its cursor and time ranges; a range whose rows all went is gone.
    expect(rawRows(path, 'SELECT * FROM event_times ORDER BY last_cursor')).toEqual([
      { last_cursor: 4, first_cursor: 3, min_at: 150, max_at: 900 },
    ]);
  });
});
