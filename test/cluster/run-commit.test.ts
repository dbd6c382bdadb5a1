import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

type Runtime = ReturnType<typeof createRuntime>;
const running: Runtime[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.end();
  for (const runtime of running.splice(0)) await runtime.close();
});

function worker(schema: string): Runtime {
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    cluster: { leaseMs: 10_000, pollMs: 100, scanMs: 250 },
    providers: { scripted: scriptedModel([{ text: 'first reply' }, { text: 'second reply' }]) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
  });
  running.push(runtime);
  return runtime;
}

async function connect(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  clients.push(client);
  return client;
}

/** Poll the database (a real wait on another process's progress) until `check` holds. */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 500; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the condition never held');
}

const stallKey = 7_340_017;

describe('a cluster worker commits a run', { timeout: 60_000 }, () => {
  it("writes the run's closed row and its run.ended in one transaction: while run.ended is stalled, the close is not committed either", async () => {
    const schema = freshSchema();
    const owner = worker(schema);
    const other = worker(schema);
    await owner.session('chat').send({ id: 'm1', text: 'one' });
    expect(await owner.session('chat').waitForEnd({ timeoutMs: 10_000 })).toMatchObject({ status: 'ended' });

    // Stall the insert of the next run.ended (a trigger waits on a lock this test holds): the moment a worker
    // could be killed between the run's close and its run.ended.
    const holder = await connect(schema);
    await holder.query(`CREATE FUNCTION stall_run_ended() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${stallKey}); RETURN NEW; END $$`);
    await holder.query(`CREATE TRIGGER stall_run_ended BEFORE INSERT ON events FOR EACH ROW
      WHEN (NEW.type = 'run.ended') EXECUTE FUNCTION stall_run_ended()`);
    await holder.query('SELECT pg_advisory_lock($1)', [stallKey]);

    // The second run, started through the other worker (forwarded to the owner), reaches its end and stalls.
    await other.session('chat').send({ id: 'm2', text: 'two' });
    const stalled = (): Promise<boolean> =>
      rawQuery<{ waiting: string }>(
        schema,
        `SELECT count(*)::text AS waiting FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
           AND objid = $1`,
        [stallKey],
      ).then((rows) => rows[0]?.waiting === '1');
    await until(stalled);
    const runs = await rawQuery<{ status: string }>(schema, 'SELECT status FROM runs ORDER BY started_at');
    expect(runs.map((run) => run.status)).toEqual(['completed', 'running']);

    await holder.query('SELECT pg_advisory_unlock($1)', [stallKey]);
    const second = await owner.session('chat').waitForEnd({ timeoutMs: 10_000 });
    const runId = second.status === 'ended' ? second.run.runId : '';
    expect(second).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'second reply' } });
    const ended = await rawQuery(schema, "SELECT 1 FROM events WHERE run_id = $1 AND type = 'run.ended'", [
      runId,
    ]);
    expect(ended).toHaveLength(1);
    // The cursors the log holds are dense and in order: numbered in the transaction that wrote them.
    const cursors = await rawQuery<{ at: string }>(
      schema,
      'SELECT cursor::text AS at FROM events ORDER BY events.cursor',
    );
    expect(cursors.map((row) => Number(row.at))).toEqual(cursors.map((_, index) => index + 1));
  });
});
