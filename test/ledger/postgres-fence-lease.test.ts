import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { openPostgresConnection, type PostgresConnection } from '../../src/ledger/postgres/connection.js';
import { claimSession, fencedAccess, type FenceLease } from '../../src/ledger/postgres/fence.js';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

const opened: PostgresConnection[] = [];
afterEach(async () => {
  for (const connection of opened.splice(0)) await connection.close();
});

const nowMs = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** A lease of the test's own: a row of `test_leases` (the cluster's are its workers' rows). */
const lease: FenceLease = {
  holder: 'w1',
  remainingMs: `(SELECT until - ${nowMs} FROM test_leases WHERE holder = $3)`,
  // Division by zero once the lease ended: any error fails the commit.
  commitCheck: `SELECT 1 / (SELECT count(*)::int FROM test_leases WHERE holder = 'w1' AND until > ${nowMs})`,
};

/** A migrated connection on a fresh schema with a lease of `leaseMs` left, and session `s1` claimed. */
async function open(
  leaseMs: number,
): Promise<{ connection: PostgresConnection; schema: string; epoch: number }> {
  const schema = freshSchema();
  const connection = openPostgresConnection({
    connectionString: postgresUrl,
    schema,
    idleInTransactionTimeoutMs: 1_000,
  });
  opened.push(connection);
  await connection.ready();
  await rawQuery(
    schema,
    `CREATE TABLE test_leases (holder TEXT PRIMARY KEY, until BIGINT NOT NULL);
     CREATE TABLE notes (text TEXT NOT NULL);
     INSERT INTO test_leases VALUES ('w1', ${nowMs} + ${leaseMs});`,
  );
  const epoch = await claimSession(connection, 's1', 1);
  return { connection, schema, epoch };
}

const notes = async (schema: string): Promise<string[]> =>
  (await rawQuery<{ text: string }>(schema, 'SELECT text FROM notes')).map((row) => row.text);

describe('the Postgres fence with a lease', () => {
  it('refuses a write with fenced when the lease it was claimed under ended, writing nothing', async () => {
    const { connection, schema, epoch } = await open(-1);
    const fenced = fencedAccess(connection, { sessionKey: 's1', epoch, lease });
    const refused = await fenced
      .write((query) => query("INSERT INTO notes VALUES ('late')"))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isRuntimeError(refused, 'fenced')).toBe(true);
    expect(await notes(schema)).toEqual([]);
  });

  it('cuts the statement and lock timeouts of the transaction to the lease left, keeping a shorter idle timeout', async () => {
    const { connection, epoch } = await open(60_000);
    const fenced = fencedAccess(connection, { sessionKey: 's1', epoch, lease });
    const settingMs = (name: string): string =>
      `(extract(epoch from current_setting('${name}')::interval) * 1000)::int AS ${name}`;
    const [row] = await fenced.write(
      async (query) =>
        (
          await query<Record<string, number>>(
            `SELECT ${['statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout'].map(settingMs).join(', ')}`,
          )
        ).rows,
    );
    expect(row?.['statement_timeout']).toBeGreaterThan(50_000);
    expect(row?.['statement_timeout']).toBeLessThanOrEqual(60_000);
    expect(row?.['lock_timeout']).toBe(row?.['statement_timeout']);
    expect(row?.['idle_in_transaction_session_timeout']).toBe(1_000);
    // The timeouts end with the transaction.
    const after = await connection.read(
      async (query) => (await query<{ s: string }>("SELECT current_setting('statement_timeout') AS s")).rows,
    );
    expect(after).toEqual([{ s: '0' }]);
  });

  it('fails the commit when the lease ended during the transaction: the fenced write is refused alone, the others of the batch commit', async () => {
    const { connection, schema, epoch } = await open(60_000);
    const fenced = fencedAccess(connection, { sessionKey: 's1', epoch, lease });
    // One batch: the fenced write passes its check, then the lease ends (from another connection) before COMMIT.
    const [write, other] = await Promise.allSettled([
      fenced.write((query) => query("INSERT INTO notes VALUES ('fenced')")),
      connection.write(async (query) => {
        await rawQuery(schema, "UPDATE test_leases SET until = 0 WHERE holder = 'w1'");
        await query("INSERT INTO notes VALUES ('unfenced')");
      }),
    ]);
    expect(write.status === 'rejected' && isRuntimeError(write.reason, 'fenced')).toBe(true);
    expect(other.status).toBe('fulfilled');
    expect(await notes(schema)).toEqual(['unfenced']);
  });
});
