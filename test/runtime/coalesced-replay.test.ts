import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createSqliteLedger, type Ledger, type RuntimeEvent } from 'agentlanes';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { freshPostgresLedger } from '../support/postgres.js';

const opened: Ledger[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
});

/**
 * Two runs streaming at once (sessions s1 and s2) with another session's events between their tokens, every event
 * at the same instant so the ledger coalesces each run's deltas into rows that overlap in cursor order.
 */
function interleaved(): RuntimeEvent[] {
  const events: RuntimeEvent[] = [];
  const seqs = new Map<string, number>();
  const next = (sessionKey: string) => {
    const seq = (seqs.get(sessionKey) ?? 0) + 1;
    seqs.set(sessionKey, seq);
    return { sessionKey, seq, cursor: events.length + 1, at: 5000 };
  };
  for (let index = 0; index < 90; index++) {
    const run = index % 3 === 2 ? 'r2' : 'r1';
    const sessionKey = run === 'r1' ? 's1' : 's2';
    events.push({ ...next(sessionKey), type: 'assistant.delta', runId: run, delta: `${run}-${index} ` });
    if (index % 7 === 6)
      events.push({ ...next('s3'), type: 'message.queued', messageId: `m${index}`, position: 1 });
  }
  return events;
}

/** Page through the log the way a stream does: after `after`, up to `until`, `limit` rows a page. */
async function readAll(
  ledger: Ledger,
  query: { after: number; until?: number; limit?: number; sessionKey?: string },
): Promise<RuntimeEvent[]> {
  const read: RuntimeEvent[] = [];
  let after = query.after;
  for (;;) {
    const page = await ledger.readEvents({ ...query, after });
    read.push(...page);
    if (page.length === 0 || query.limit === undefined || page.length < query.limit) return read;
    after = (page.at(-1) as RuntimeEvent).cursor;
  }
}

/** What a reader must get for `(after, until]`: each token's text once, the other events as they are. */
function expected(events: readonly RuntimeEvent[], after: number, until: number, sessionKey?: string) {
  const within = events.filter(
    (event) =>
      event.cursor > after &&
      event.cursor <= until &&
      (sessionKey === undefined || event.sessionKey === sessionKey),
  );
  return summary(within);
}

/** The text of each run and the other events, in order: what coalescing may not change. */
function summary(events: readonly RuntimeEvent[]) {
  const text: Record<string, string> = {};
  const others: number[] = [];
  for (const event of events) {
    if (event.type === 'assistant.delta')
      text[event.runId ?? ''] = (text[event.runId ?? ''] ?? '') + event.delta;
    else others.push(event.cursor);
  }
  return { text, others };
}

/** Append one event at a time without waiting, as the bus does, so the deltas coalesce; then wait for all. */
async function record(ledger: Ledger, events: readonly RuntimeEvent[]): Promise<void> {
  await Promise.all(events.map((event) => ledger.appendEvents([event])));
}

const ledgers = {
  memory: () => createMemoryLedger(),
  sqlite: () => createSqliteLedger({ path: tempLedgerPath('coalesced-replay') }),
  postgres: () => freshPostgresLedger(),
};

describe('readEvents over coalesced token deltas', () => {
  for (const [kind, create] of Object.entries(ledgers)) {
    it(`hands out each token's text exactly once from any cursor, up to any cursor, on ${kind}`, async () => {
      const ledger = create();
      opened.push(ledger);
      const events = interleaved();
      await record(ledger, events);
      const last = events.length;
      const step = kind === 'postgres' ? 5 : 1;
      for (let after = 0; after <= last; after += step) {
        for (const until of [undefined, after + 1, after + 9, after + 40]) {
          for (const limit of [undefined, 2, 7]) {
            const query = {
              after,
              ...(until === undefined ? {} : { until }),
              ...(limit === undefined ? {} : { limit }),
            };
            const read = await readAll(ledger, query);
            const cursors = read.map((event) => event.cursor);
            expect(cursors, `cursors after ${after}`).toEqual([...new Set(cursors)].sort((a, b) => a - b));
            expect(summary(read), `after ${after} until ${until} limit ${limit}`).toEqual(
              expected(events, after, until ?? last),
            );
          }
        }
        const session = await readAll(ledger, { after, limit: 3, sessionKey: 's1' });
        expect(summary(session)).toEqual(expected(events, after, last, 's1'));
      }
    });
  }

  it('stores the deltas of a run in fewer rows than tokens on SQLite', async () => {
    const path = tempLedgerPath('coalesced-rows');
    const ledger = createSqliteLedger({ path });
    opened.push(ledger);
    await record(ledger, interleaved());
    const database = new Database(path, { readonly: true });
    const { count } = database
      .prepare("SELECT count(*) AS count FROM events WHERE type = 'assistant.delta'")
      .get() as { count: number };
    database.close();
    // The rows above are cut where they overlap only because they do: 90 tokens went into a few rows.
    expect(count).toBeLessThan(10);
  });
});
