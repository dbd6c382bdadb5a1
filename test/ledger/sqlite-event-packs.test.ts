import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime, type RuntimeError, type RuntimeEvent } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { jsonBodies, rawRows } from '../support/sqlite-statements.js';
import { expandBody } from '../../src/ledger/sql/body-pieces.js';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { createSqliteLedger } from '../../src/ledger/sqlite/ledger.js';

const tempPath = (): string => tempLedgerPath('packs');

function event(
  cursor: number,
  fields: Partial<RuntimeEvent> & Pick<RuntimeEvent, 'type'> & Record<string, unknown>,
): RuntimeEvent {
  return { sessionKey: 's1', seq: cursor, cursor, at: 1000 + cursor, ...fields } as RuntimeEvent;
}
const block = (cursor: number, fields: Record<string, unknown> = {}): RuntimeEvent =>
  event(cursor, {
    type: 'assistant.block',
    runId: 'r1',
    index: cursor,
    blockId: `r1:${cursor}`,
    text: `b${cursor}`,
    ...fields,
  });

describe('event packs in the SQLite ledger', () => {
  it("stores one session's events of a transaction as one row, its cursor, seq and time the last event's", async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    const events = [
      event(1, {
        type: 'message.received',
        messageId: 'm1',
        text: 'hi',
        mode: 'followup',
        disposition: 'started',
      }),
      event(2, { type: 'message.queued', sessionKey: 's2', messageId: 'm2', position: 1 }),
      event(3, { type: 'run.started', runId: 'r1', messageIds: ['m1'], provider: 'p', model: 'm' }),
      block(4, { blockId: 'own' }),
    ];
    await ledger.appendEvents(events);
    expect(await ledger.readEvents({})).toEqual(events);
    await ledger.close();
    const stored = rawRows(
      path,
      'SELECT cursor, session_key, seq, type, run_id, at, body FROM events ORDER BY cursor',
    );
    // Stored shortened (sql/body-pieces.ts): the pack's body is less than half its JSON.
    const packBody = (stored[1] as { body: string }).body;
    expect(packBody.length * 2).toBeLessThan(expandBody(packBody).length);
    expect(jsonBodies(stored)).toEqual([
      {
        cursor: 2,
        session_key: 's2',
        seq: 2,
        type: 'message.queued',
        run_id: null,
        at: 1002,
        body: '{"messageId":"m2","position":1}',
      },
      {
        cursor: 4,
        session_key: 's1',
        seq: 4,
        type: 'pack',
        run_id: 'r1',
        at: 1004,
        // [cursor back, seq back, time back, type, body, run id when not the row's]
        body:
          '[[3,3,3,"message.received",{"messageId":"m1","text":"hi","mode":"followup","disposition":"started"},null],' +
          '[1,1,1,"run.started",{"messageIds":["m1"],"provider":"p","model":"m"}],' +
          '[0,0,0,"assistant.block",{"index":4,"blockId":"own","text":"b4"}]]',
      },
    ]);
  });

  it('hands out every event of a pack once, whatever cursor a page starts or stops at', async () => {
    const ledger = createSqliteLedger({ path: tempPath() });
    // Two sessions interleaved, packed per session: rows 7 (s1: 1, 3, 5, 7) and 8 (s2: 2, 4, 6, 8).
    const events = Array.from({ length: 8 }, (_, index) =>
      block(index + 1, { sessionKey: index % 2 === 0 ? 's1' : 's2', blockId: `b${index + 1}` }),
    );
    await ledger.appendEvents(events);
    for (let after = 0; after <= 8; after++) {
      for (let limit = 1; limit <= 9; limit++) {
        const expected = events.filter((stored) => stored.cursor > after).slice(0, limit);
        expect(await ledger.readEvents({ after, limit })).toEqual(expected);
      }
      expect(await ledger.readEvents({ after, until: 5 })).toEqual(
        events.filter((stored) => stored.cursor > after && stored.cursor <= 5),
      );
      expect(await ledger.readEvents({ after, sessionKey: 's2', limit: 2 })).toEqual(
        events.filter((stored) => stored.cursor > after && stored.sessionKey === 's2').slice(0, 2),
      );
    }
    // Paging by the last cursor handed out walks the whole log once.
    const paged: RuntimeEvent[] = [];
    for (let page = await ledger.readEvents({ limit: 3 }); page.length > 0;) {
      paged.push(...page);
      page = await ledger.readEvents({ after: (page.at(-1) as RuntimeEvent).cursor, limit: 3 });
    }
    expect(paged).toEqual(events);
    await ledger.close();
  });

  it('prunes the older events out of a pack that also holds newer ones, keeping the session seq', async () => {
    const path = tempPath();
    const ledger = createSqliteLedger({ path });
    // Times need not follow cursors: the event with the highest seq is the oldest.
    const events = [block(1, { at: 500 }), block(2, { at: 700 }), block(3, { at: 400 })];
    await ledger.appendEvents(events);
    expect(await ledger.pruneEvents(600)).toBe(2);
    expect(await ledger.readEvents({})).toEqual([events[1]]);
    expect(await ledger.lastSeq?.('s1')).toBe(3);
    expect(await ledger.pruneEvents(701)).toBe(1);
    expect(await ledger.readEvents({})).toEqual([]);
    expect(await ledger.lastCursor()).toBe(3);
    await ledger.close();
    expect(rawRows(path, 'SELECT count(*) AS rows FROM events')).toEqual([{ rows: 0 }]);
  });

  it('reads a corrupt pack as one marker at its cursor, and a corrupt entry as a marker in its place', async () => {
    const path = tempPath();
    const first = createSqliteLedger({ path });
    await first.appendEvents([block(1), block(2), block(3)]);
    await first.appendEvents([block(4, { sessionKey: 's2' }), block(5, { sessionKey: 's2' })]);
    await first.close();
    const raw = new Database(path);
    raw
      .prepare('UPDATE events SET body = ? WHERE cursor = 3')
      .run('[[2,2,2,"assistant.block",{"index":1,"te');
    const entries = JSON.parse(
      expandBody((raw.prepare('SELECT body FROM events WHERE cursor = 5').get() as { body: string }).body),
    ) as unknown[][];
    (entries[0] as unknown[])[4] = { index: 'four' };
    raw.prepare('UPDATE events SET body = ? WHERE cursor = 5').run(JSON.stringify(entries));
    raw.close();
    const reports: RuntimeError[] = [];
    const ledger = createSqliteLedger({ path });
    ledger.onCorruptRow?.((error) => reports.push(error));
    const read = await ledger.readEvents({});
    expect(read.map((stored) => [stored.type, stored.cursor, stored.sessionKey])).toEqual([
      ['ledger.corrupt', 3, 's1'],
      ['ledger.corrupt', 4, 's2'],
      ['assistant.block', 5, 's2'],
    ]);
    expect((read[0] as { message: string }).message).toContain('pack body is not valid JSON');
    expect((read[1] as { message: string }).message).toContain('index');
    expect(reports.map((report) => report.details)).toEqual([
      { table: 'events', row: 'cursor 3', sessionKey: 's1' },
      { table: 'events', row: 'cursor 4', sessionKey: 's2' },
    ]);
    await ledger.close();
  });
});

describe('event packs under the runtime', () => {
  it('replays from the file exactly the events subscribers saw live, in fewer rows than events', async () => {
    const path = tempPath();
    const runtime = createRuntime({
      ledger: { path },
      providers: { scripted: scriptedModel(() => ({ text: 'Your parcel is on its way.' })) },
      model: { provider: 'scripted', model: 'm' },
    });
    const live: RuntimeEvent[] = [];
    const stream = runtime.events({ after: 'now' });
    const watched = (async () => {
      let ended = 0;
      for await (const seen of stream) {
        live.push(seen);
        if (seen.type === 'run.ended' && ++ended === 3) return;
      }
    })();
    for (const [index, key] of ['chat:a', 'chat:b', 'chat:a'].entries()) {
      const chat = runtime.session(key);
      await chat.send({ id: `m${index}`, text: 'where is my parcel?' });
      expect(await chat.waitForEnd({ timeoutMs: 60_000 })).toMatchObject({ status: 'ended' });
    }
    await watched;
    const replayed: RuntimeEvent[] = [];
    for await (const stored of runtime.events({ after: 0 })) {
      replayed.push(stored);
      if (stored.cursor === (live.at(-1) as RuntimeEvent).cursor) break;
    }
    await runtime.close();
    // Token deltas replay coalesced (one event per run here, the text whole); every other event as it went out.
    const others = (events: RuntimeEvent[]) => events.filter((seen) => seen.type !== 'assistant.delta');
    const texts = (events: RuntimeEvent[]) =>
      events.flatMap((seen) => (seen.type === 'assistant.delta' ? [[seen.runId, seen.delta]] : []));
    const joined = (events: RuntimeEvent[]) =>
      texts(events).reduce<Record<string, string>>((runs, [runId, text]) => {
        runs[runId as string] = (runs[runId as string] ?? '') + (text as string);
        return runs;
      }, {});
    expect(others(replayed)).toEqual(others(live));
    expect(joined(replayed)).toEqual(joined(live));
    expect(Object.values(joined(live))).toEqual(Array(3).fill('Your parcel is on its way.'));
    const { rows } = rawRows(path, 'SELECT count(*) AS rows FROM events')[0] as { rows: number };
    const { packs } = rawRows(path, "SELECT count(*) AS packs FROM events WHERE type = 'pack'")[0] as {
      packs: number;
    };
    // Per message 6 events besides deltas and one delta row; packs hold several of them.
    expect(others(live)).toHaveLength(3 * 6);
    expect(packs).toBeGreaterThanOrEqual(3);
    // Unpacked, 7 rows per message (the deltas one); packed, at most 4: the message and its run's start, the
    // deltas, the reply's block, cost and final text, and the run's end (written once the turns are durable).
    expect(rows).toBeLessThanOrEqual(3 * 4);
  });
});
