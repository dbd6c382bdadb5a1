import Database from 'better-sqlite3';
import { packType, unpackRow } from '../../src/ledger/sql/event-packs.js';
import { expandBody } from '../../src/ledger/sql/body-pieces.js';
import type { EventRow } from '../../src/ledger/sql/rows.js';

/** The SQL of every statement better-sqlite3 runs while `work` runs (prepared statements' run / get / all). */
export async function statementsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  const seen: string[] = [];
  const originals = new Map<string, unknown>();
  for (const method of ['run', 'get', 'all']) {
    const original = prototype[method] as (...args: unknown[]) => unknown;
    originals.set(method, original);
    prototype[method] = function (this: { source: string }, ...args: unknown[]) {
      seen.push(this.source);
      return original.apply(this, args);
    };
  }
  try {
    await work();
  } finally {
    for (const [method, original] of originals) prototype[method] = original;
  }
  return seen;
}

/** The raw rows of a closed ledger file. */
export function rawRows(path: string, sql: string): unknown[] {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.prepare(sql).all();
  } finally {
    raw.close();
  }
}

/** Rows read with `rawRows` whose `body` column is an event body, each body as JSON text (as stored: shortened). */
export function jsonBodies(rows: unknown[]): unknown[] {
  return rows.map((row) => {
    const { body } = row as { body: string };
    return { ...(row as object), body: expandBody(body) };
  });
}

/**
 * The event rows of a ledger file as one row per event: a pack row (one session's events of a transaction, see
 * src/ledger/sql/event-packs.ts) as the rows its events would have had, each body as JSON text, in cursor order.
 * For tests that check the file itself rather than what `readEvents` hands out.
 */
export function storedEventRows(database: Database.Database): EventRow[] {
  const rows = database.prepare('SELECT * FROM events ORDER BY cursor').all() as EventRow[];
  const events = rows.flatMap((row): EventRow[] => {
    if (row.type !== packType) return [{ ...row, body: expandBody(row.body) }];
    const packed = unpackRow(row);
    if (typeof packed === 'string') throw new Error(`cursor ${row.cursor}: ${packed}`);
    return packed.map((entry) => ({ ...entry, body: JSON.stringify(entry.body) }));
  });
  return events.sort((left, right) => left.cursor - right.cursor);
}
