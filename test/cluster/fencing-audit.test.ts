import pg from 'pg';
import { describe, expect, it, onTestFailed } from 'vitest';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';
import { workerAppName, type Worker } from './cluster-driver.js';
import { clusterFixture, type ClusterFixture } from './cluster-fixture.js';
import { auditWrites, installWriteAudit } from './write-audit.js';

/** The workers' lease; their scan interval is 250 ms (worker-child.ts). */
const leaseMs = 3_000;
const scanMs = 250;
/** How long a stalled worker is kept stopped at most while waiting for the takeover (a guard, not a bound). */
const stopCapMs = leaseMs + scanMs + 5_000;
/** The advisory lock the stall trigger waits for while the test holds it. */
const stallLock = 4242;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` until it answers true; false once `capMs` passed. */
async function eventually(check: () => Promise<boolean>, capMs: number): Promise<boolean> {
  const deadline = Date.now() + capMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

/** Wait until `worker` reports the session idle (through a takeover if need be). */
async function settle(worker: Worker, sessionKey: string): Promise<void> {
  let result = await worker.call<{ status: string }>(sessionKey, 'waitForEnd', { timeoutMs: 20_000 });
  while (result.status !== 'idle')
    result = await worker.call(sessionKey, 'waitForEnd', { timeoutMs: 20_000 });
}

/**
 * A trigger that makes the insert of the assistant turn `echo stall here` wait for an advisory lock the test holds:
 * the writing worker is then inside its write transaction, the session's row held, when the test stops it.
 */
async function installStall(schema: string): Promise<void> {
  await rawQuery(
    schema,
    `CREATE FUNCTION audit_stall() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN PERFORM pg_advisory_xact_lock(${stallLock}); RETURN NEW; END $$;
     CREATE TRIGGER audit_stall BEFORE INSERT ON turns FOR EACH ROW
       WHEN (NEW.content = 'echo stall here') EXECUTE FUNCTION audit_stall();`,
  );
}

/** The session's epoch and owner now. */
async function ownerOf(fixture: ClusterFixture, sessionKey: string) {
  const [row] = await fixture.query<{ epoch: number; worker_id: string | null }>(
    `SELECT s.epoch, o.worker_id FROM sessions s LEFT JOIN cluster_owners o USING (session_key)
     WHERE s.session_key = $1`,
    [sessionKey],
  );
  return row;
}

describe('the write audit of a cluster whose workers stall', { timeout: 180_000 }, () => {
  it('commits no write of a stopped worker after another worker claimed its session, nor after its lease ended, when stopped mid-stream and inside a write transaction', async () => {
    const schema = freshSchema();
    await installWriteAudit(schema);
    await installStall(schema);
    const fixture = clusterFixture(schema);
    onTestFailed(() => console.log(fixture.log.join('')));
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => fixture.start(name, { leaseMs })));
    if (a === undefined || b === undefined || c === undefined) throw new Error('three workers');

    // A worker that owns busy sessions (runs streaming) is stopped for longer than its lease.
    const busy = ['busy-1', 'busy-2', 'busy-3'];
    for (const key of busy) await a.call(key, 'send', { id: `${key}-m1`, text: 'slow:4000' });
    await fixture.callSeen('a', 'slow:4000', false);
    a.signal('SIGSTOP');
    // Forwarded to A until its lease ran out; then B claims each session and runs the message.
    for (const key of busy) await b.call(key, 'send', { id: `${key}-m2`, text: `after ${key}` });
    for (const key of busy) await settle(b, key);
    a.signal('SIGCONT');
    for (const key of busy) await settle(a, key);

    // A worker stopped inside its write transaction: the insert of its assistant turn waits for the test's lock.
    const locker = new pg.Client({ connectionString: postgresUrl });
    await locker.connect();
    let takenOverWhileStopped: boolean;
    try {
      await locker.query('SELECT pg_advisory_lock($1)', [stallLock]);
      await c.call('stall', 'send', { id: 'stall-m1', text: 'stall here' });
      const waiting = await eventually(async () => {
        const rows = await rawQuery(
          schema,
          `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event = 'advisory'`,
          [workerAppName(schema, 'c')],
        );
        return rows.length > 0;
      }, 30_000);
      expect(waiting).toBe(true);
      c.signal('SIGSTOP');
      await locker.query('SELECT pg_advisory_unlock($1)', [stallLock]);
      const stalled = await ownerOf(fixture, 'stall');
      // Another worker claims the session (its epoch moved on) while C is still stopped.
      takenOverWhileStopped = await eventually(async () => {
        const now = await ownerOf(fixture, 'stall');
        return now !== undefined && now.epoch > (stalled?.epoch ?? 0) && now.worker_id !== stalled?.worker_id;
      }, stopCapMs);
    } finally {
      c.signal('SIGCONT');
      await locker.end();
    }
    await settle(b, 'stall');
    // C stopped acting for the session: a message sent through it runs on the new owner.
    await c.call('stall', 'send', { id: 'stall-m2', text: 'from c' });
    await settle(b, 'stall');
    const fromC = fixture.calls.filter((call) => call.text === 'from c').map((call) => call.worker);
    expect(fromC).toHaveLength(1);
    expect(fromC).not.toContain('c');

    const audit = await auditWrites(schema);
    expect(audit.afterForeignClaim).toEqual([]);
    expect(audit.afterLease).toEqual([]);
    expect(takenOverWhileStopped).toBe(true);
    // The audit saw the stalled workers write, and the sessions change hands.
    const claimers = await fixture.query<{ session_key: string; n: number }>(
      `SELECT session_key, count(DISTINCT claimer)::int AS n FROM audit_claims GROUP BY session_key`,
    );
    for (const key of [...busy, 'stall'])
      expect(claimers.find((row) => row.session_key === key)?.n).toBeGreaterThanOrEqual(2);
    const writers = await fixture.query<{ session_key: string; writers: string[] }>(
      `SELECT session_key, array_agg(DISTINCT writer ORDER BY writer) AS writers FROM audit_writes
       WHERE session_key = ANY($1) GROUP BY session_key ORDER BY session_key`,
      [[...busy, 'stall']],
    );
    const stalledWriter = (key: string): string => workerAppName(schema, key === 'stall' ? 'c' : 'a');
    expect(writers.map((row) => row.session_key)).toEqual([...busy, 'stall']);
    for (const row of writers) {
      expect(row.writers).toContain(stalledWriter(row.session_key));
      expect(row.writers.length).toBeGreaterThanOrEqual(2);
    }
    expect(audit.writes).toBeGreaterThan(0);
    expect(audit.claims).toBeGreaterThan(0);
  });
});
