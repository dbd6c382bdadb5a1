import Database from 'better-sqlite3';

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
