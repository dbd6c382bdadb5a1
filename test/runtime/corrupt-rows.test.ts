import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteLedger, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { rejection, startOnFile as start } from '../support/file-runtime.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A ledger file where sessions chat:good and chat:bad each have one pending message; then `damage` runs. */
async function ledgerFile(damage: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-corrupt-runtime-'));
  dirs.push(dir);
  const path = join(dir, 'ledger.db');
  const ledger = createSqliteLedger({ path });
  for (const key of ['chat:good', 'chat:bad']) {
    await ledger.appendMessage({
      sessionKey: key,
      messageId: `${key}-1`,
      order: 1,
      text: `hello from ${key}`,
      mode: 'followup',
      status: 'pending',
      acceptedAt: 0,
    });
  }
  await ledger.close();
  const raw = new Database(path);
  for (const statement of damage) raw.exec(statement);
  raw.close();
  return path;
}

describe('createRuntime (corrupt ledger rows)', () => {
  it('reports a pending message with an unknown status once and keeps serving the other sessions', async () => {
    const path = await ledgerFile(["UPDATE inbox SET status = 'pendng' WHERE session_key = 'chat:bad'"]);
    const app = start(path);
    await app.clock.advance(1000);
    expect(app.model.requests.map((request) => JSON.stringify(request.messages))).toEqual([
      expect.stringContaining('hello from chat:good'),
    ]);

    for (let attempt = 0; attempt < 2; attempt++) {
      const refused = await rejection(
        app.runtime.session('chat:bad').send({ id: `b${attempt}`, text: 'again' }),
      );
      expect(isRuntimeError(refused, 'ledger_corrupt')).toBe(true);
      expect((refused as Error).message).toContain('inbox row ("chat:bad", 1)');
    }
    const good = await app.runtime.session('chat:good').send({ id: 'g2', text: 'more' });
    expect(good.disposition).toBe('started');
    await app.clock.advance(1000);
    await app.close();

    const corrupt = app.errors.filter((error) => isRuntimeError(error, 'ledger_corrupt'));
    expect(corrupt).toHaveLength(1);
    expect(app.errors).toHaveLength(1);
    expect(
      app.events
        .filter((event) => event.type === 'ledger.corrupt')
        .map((event) => [event.sessionKey, 'table' in event ? event.table : undefined]),
    ).toEqual([['chat:bad', 'inbox']]);
  });

  it('answers ledger_corrupt, not a TypeError, for a session whose snapshot has the wrong shape', async () => {
    const path = await ledgerFile([
      `INSERT INTO sessions (session_key, override, snapshot, epoch, last_seq, updated_at)
       VALUES ('chat:bad', '{}', '{"value":"idle","context":{"queue":"not a list"}}', 1, 0, 0)`,
    ]);
    const app = start(path);
    await app.clock.advance(1000);
    const refused = await rejection(app.runtime.session('chat:bad').send({ id: 'b2', text: 'again' }));
    expect(isRuntimeError(refused, 'ledger_corrupt')).toBe(true);
    expect((refused as { details?: unknown }).details).toMatchObject({
      table: 'sessions',
      sessionKey: 'chat:bad',
    });
    expect(app.model.requests).toHaveLength(1);
    await app.close();
    expect(app.errors.filter((error) => isRuntimeError(error, 'ledger_corrupt'))).toHaveLength(1);
  });

  it('replays every session past a bad event body, with a ledger.corrupt marker in its place', async () => {
    const path = await ledgerFile([]);
    const first = start(path);
    await first.clock.advance(1000);
    await first.close();
    const recorded = first.events.filter((event) => event.sessionKey === 'chat:bad');
    const bad = recorded[0] as RuntimeEvent;
    const raw = new Database(path);
    raw.prepare('UPDATE events SET body = ? WHERE cursor = ?').run('{"broken":', bad.cursor);
    raw.close();

    const second = start(path);
    await second.clock.advance(1000);
    await second.close();
    const replayed = second.events.filter((event) => event.cursor <= (first.events.at(-1)?.cursor ?? 0));
    expect(replayed.map((event) => event.cursor)).toEqual(first.events.map((event) => event.cursor));
    expect(replayed.find((event) => event.cursor === bad.cursor)).toMatchObject({
      type: 'ledger.corrupt',
      sessionKey: 'chat:bad',
      seq: bad.seq,
      table: 'events',
      row: `cursor ${bad.cursor}`,
    });
    expect(second.errors.filter((error) => isRuntimeError(error, 'ledger_corrupt'))).toHaveLength(1);
  });
});
