import pg from 'pg';

const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const original = prototype.query;

/**
 * The statements one SQL text holds: the gathered statements of a transaction sent as one (src/ledger/postgres/
 * queue.ts, `combinedStatement`: each a CTE `wN_M AS (...)`), each from its start; any other text is itself.
 */
export function statementsIn(text: string): string[] {
  const bodies = text.split(/\bw\d+_\d+ AS \(/u);
  return bodies.length === 1 ? [text] : bodies.slice(1);
}

/**
 * The SQL text of every statement a `pg` client sends, in order, while watched: `watch()` starts recording (from
 * an empty list), `restore()` puts the client's own `query` back.
 */
export function statementProbe() {
  const sent: string[] = [];
  return {
    sent,
    watch(): void {
      sent.length = 0;
      prototype.query = function (this: pg.Client, ...args: unknown[]): unknown {
        const first = args[0] as string | { text: string };
        sent.push(typeof first === 'string' ? first : first.text);
        return original.apply(this, args);
      };
    },
    restore(): void {
      prototype.query = original;
    },
  };
}
