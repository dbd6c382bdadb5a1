import pg from 'pg';

const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const original = prototype.query;

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
