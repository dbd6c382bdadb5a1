import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeError } from 'agentlanes';
import { createPostgresLedger, type PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { postgresMigrations } from '../../src/ledger/postgres/schema.js';
import { message, run } from '../contracts/ledger-fixtures.contract.js';
import { freshPostgresLedger, freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

const opened: PostgresLedger[] = [];
afterEach(async () => {
  for (const ledger of opened.splice(0)) await ledger.close();
});

function open(schema: string): PostgresLedger {
  const ledger = freshPostgresLedger({ schema });
  opened.push(ledger);
  return ledger;
}

async function rejection(promise: Promise<unknown>): Promise<RuntimeError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isRuntimeError(error)) throw new Error(`expected a RuntimeError, got ${String(error)}`);
  return error;
}

/** A loopback port that accepts connections and closes them at once: a server that is not Postgres. */
async function closingPort(): Promise<{ port: number; server: Server }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { port: address.port, server };
}

describe('createPostgresLedger (open)', () => {
  it('records every migration once and keeps the data when two ledgers open one schema at once', async () => {
    const schema = freshSchema();
    const [first, second] = [open(schema), open(schema)];
    await Promise.all([first.ready(), second.ready()]);
    const versions = await rawQuery<{ version: number }>(
      schema,
      'SELECT version FROM agentlanes_migrations ORDER BY version',
    );
    expect(versions.map((row) => row.version)).toEqual(postgresMigrations.map((_, index) => index + 1));
    await first.appendMessage(message('s1', 'm1', 1));
    expect((await second.listMessages('s1')).map((record) => record.messageId)).toEqual(['m1']);
    await first.close();
    const again = open(schema);
    expect((await again.listMessages('s1')).map((record) => record.messageId)).toEqual(['m1']);
  });

  it('refuses a schema a newer agentlanes migrated with ledger_version, changing nothing', async () => {
    const schema = freshSchema();
    await open(schema).ready();
    const newer = postgresMigrations.length + 1;
    await rawQuery(schema, 'INSERT INTO agentlanes_migrations (version) VALUES ($1)', [newer]);
    const ledger = open(schema);
    const error = await rejection(ledger.listSessions());
    expect(error.code).toBe('ledger_version');
    expect(error.message).toContain(`version ${newer}`);
    const tables = await rawQuery(schema, 'SELECT count(*)::int AS n FROM agentlanes_migrations');
    expect(tables).toEqual([{ n: postgresMigrations.length + 1 }]);
  });

  it('rejects with ledger_unavailable without the password when the server cannot be reached', async () => {
    const password = 's3cret-Pa55word';
    const { port, server } = await closingPort();
    server.close();
    const connectionString = `postgres://postgres:${password}@127.0.0.1:${port}/test`;
    const ledger = createPostgresLedger({ connectionString, connectTimeoutMs: 2000 });
    opened.push(ledger);
    for (const call of [ledger.ready(), ledger.getSession('s1'), ledger.openRun(run('s1', 'r1'))]) {
      const error = await rejection(call);
      expect(error.code).toBe('ledger_unavailable');
      const everything = `${error.message} ${JSON.stringify(error.details)} ${error.stack ?? ''} ${String(error.cause)}`;
      expect(everything).not.toContain(password);
      expect(error.message).toContain(`127.0.0.1:${port}`);
    }
  });

  it('rejects with ledger_unavailable without the password when the port is not a Postgres server', async () => {
    const password = 'an0ther-secret';
    const { port, server } = await closingPort();
    try {
      const ledger = createPostgresLedger({
        connectionString: `postgres://postgres:${password}@127.0.0.1:${port}/test`,
        connectTimeoutMs: 2000,
      });
      opened.push(ledger);
      const error = await rejection(ledger.listSessions());
      expect(error.code).toBe('ledger_unavailable');
      expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain(password);
    } finally {
      server.close();
    }
  });

  it('serves calls once the server is back when the first ones failed to connect', async () => {
    const schema = freshSchema();
    const { port, server } = await closingPort();
    server.close();
    const url = new URL(postgresUrl);
    const down = createPostgresLedger({
      connectionString: postgresUrl.replace(`:${url.port || 5432}/`, `:${port}/`),
      schema,
      connectTimeoutMs: 1000,
    });
    opened.push(down);
    expect((await rejection(down.listSessions())).code).toBe('ledger_unavailable');
    expect(await open(schema).listSessions()).toEqual([]);
  });

  it('throws invalid_input at construction when the schema is not a lowercase identifier', () => {
    for (const schema of ['Agent', 'a-b', 'x; DROP TABLE y', '']) {
      let error: unknown;
      try {
        createPostgresLedger({ connectionString: postgresUrl, schema });
      } catch (caught) {
        error = caught;
      }
      expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    }
  });
});
