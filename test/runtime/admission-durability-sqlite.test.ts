import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import type { ScriptEntry } from 'agentlanes/testing';
import { errorOf } from '../support/error-of.js';
import { createHarness } from '../support/runtime-harness.js';

// Apart from admission-durability.test.ts because it reaches into the SQLite file itself, which the suites run on
// Postgres (postgres-suites-*.test.ts) do not have.

// The first run streams for 200 ms; every later run answers at once.
const script = (): ScriptEntry[] => [
  { text: 'one two three', tokenDelayMs: 100 },
  ...Array.from({ length: 6 }, () => ({ text: 'ok' })),
];

describe('Session.send when a SQLite inbox write fails', () => {
  it('rejects, stores nothing and accepts the retry when the SQLite file refuses the insert', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentlanes-admission-'));
    const path = join(dir, 'ledger.db');
    try {
      const setup = createHarness(script(), { ledger: { path } });
      await setup.close();
      // A real write failure inside SQLite: inserts stamped before t=5 abort.
      const raw = new Database(path);
      raw.exec(`CREATE TRIGGER refuse_early BEFORE INSERT ON inbox WHEN NEW.accepted_at < 5
        BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END;`);
      raw.close();
      const h = createHarness(script(), { ledger: { path } });
      const chat = h.runtime.session('telegram:1');
      const error = await errorOf(chat.send({ id: 'a', text: 'hi' }));
      expect(isRuntimeError(error, 'ledger_unavailable')).toBe(true);
      expect(chat.status()).toMatchObject({ state: 'idle', queued: 0 });
      await h.clock.advance(5);
      expect(h.of('message.received')).toEqual([]);
      expect(await chat.send({ id: 'a', text: 'hi' })).toMatchObject({ disposition: 'started' });
      await h.close();
      const check = new Database(path, { readonly: true });
      const rows = check.prepare('SELECT message_id, ord FROM inbox').all();
      check.close();
      expect(rows).toEqual([{ message_id: 'a', ord: 1 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
