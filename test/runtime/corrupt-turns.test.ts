import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { rejection, startOnFile as start } from '../support/file-runtime.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

function damage(path: string, statement: string): void {
  const raw = new Database(path);
  raw.exec(statement);
  raw.close();
}

const fiveMinutes = 5 * 60_000;

describe('createRuntime (corrupt turns row)', () => {
  it('fails the run once and reports ledger_corrupt once when a turn of the history has a bad extra', async () => {
    const path = tempLedgerPath('corrupt-turns');
    const first = start(path);
    await first.runtime.session('chat:a').send({ id: 'm1', text: 'hello' });
    await first.clock.advance(1000);
    expect(first.model.requests).toHaveLength(1);
    damage(path, `UPDATE turns SET extra = '{' WHERE session_key = 'chat:a' AND role = 'assistant'`);

    await first.runtime.session('chat:a').send({ id: 'm2', text: 'again' });
    await first.clock.advance(fiveMinutes);
    expect(first.started()).toBe(2);
    expect(first.model.requests).toHaveLength(1);
    const ended = first.events.filter((event) => event.type === 'run.ended').at(-1);
    expect(ended).toMatchObject({ status: 'failed', error: { code: 'ledger_corrupt' } });
    await first.close();
    expect(first.corruptErrors()).toHaveLength(1);
    expect((first.corruptErrors()[0] as { details?: unknown }).details).toMatchObject({
      table: 'turns',
      sessionKey: 'chat:a',
    });
    const reported = first.events.filter((event) => event.type === 'ledger.corrupt');
    expect(reported).toMatchObject([{ sessionKey: 'chat:a', table: 'turns' }]);

    const before = first.events.at(-1)?.cursor ?? 0;
    const second = start(path);
    await second.clock.advance(fiveMinutes);
    expect(second.started(before)).toBe(0);
    await second.runtime.session('chat:a').send({ id: 'm3', text: 'once more' });
    await second.clock.advance(fiveMinutes);
    expect(second.started(before)).toBe(1);
    expect(second.model.requests).toHaveLength(0);
    await second.close();
    expect(second.corruptErrors()).toHaveLength(1);
    const reportedAgain = second.events.filter(
      (event) => event.type === 'ledger.corrupt' && event.cursor > before,
    );
    expect(reportedAgain).toHaveLength(1);
  });

  it('fails the run when a turn extra is valid JSON of the wrong shape', async () => {
    const path = tempLedgerPath('corrupt-turns');
    const app = start(path);
    await app.runtime.session('chat:a').send({ id: 'm1', text: 'hello' });
    await app.clock.advance(1000);
    damage(path, `UPDATE turns SET extra = '{"toolCalls":"not a list"}' WHERE session_key = 'chat:a'`);
    await app.runtime.session('chat:a').send({ id: 'm2', text: 'again' });
    await app.clock.advance(fiveMinutes);
    expect(app.started()).toBe(2);
    expect(app.model.requests).toHaveLength(1);
    // The operator clears it by repairing the row: the next message runs with its whole history.
    damage(path, `UPDATE turns SET extra = NULL WHERE session_key = 'chat:a'`);
    await app.runtime.session('chat:a').send({ id: 'm3', text: 'repaired' });
    await app.clock.advance(fiveMinutes);
    expect(app.model.requests).toHaveLength(2);
    expect(app.model.requests[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'repaired' });
    await app.close();
    expect(app.corruptErrors()).toHaveLength(1);
  });

  it('refuses a stored queue override with an unknown mode at hydrate when a session is sent to', async () => {
    const path = tempLedgerPath('corrupt-turns');
    const app = start(path);
    await app.runtime.session('chat:a').send({ id: 'm1', text: 'hello' });
    await app.clock.advance(1000);
    await app.close();
    damage(path, `UPDATE sessions SET override = '{"mode":"bogus"}' WHERE session_key = 'chat:a'`);

    const second = start(path);
    await second.clock.advance(1000);
    for (const id of ['m2', 'm3']) {
      const refused = await rejection(second.runtime.session('chat:a').send({ id, text: 'again' }));
      expect(isRuntimeError(refused, 'ledger_corrupt')).toBe(true);
      expect((refused as { details?: unknown }).details).toMatchObject({
        table: 'sessions',
        sessionKey: 'chat:a',
      });
    }
    await second.clock.advance(fiveMinutes);
    expect(second.model.requests).toHaveLength(0);
    await second.close();
    expect(second.corruptErrors()).toHaveLength(1);
    expect(second.events.filter((event) => event.type === 'ledger.corrupt')).toMatchObject([
      { sessionKey: 'chat:a', table: 'sessions' },
    ]);
  });
});
