import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { isRuntimeError, type RuntimeError } from 'agentlanes';
import { createDeferred } from '../../src/core/deferred.js';
import type { PostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { event, message, run, session, turn } from '../contracts/ledger-fixtures.contract.js';
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

const count = async (schema: string, table: string): Promise<number> =>
  (await rawQuery<{ n: number }>(schema, `SELECT count(*)::int AS n FROM ${table}`))[0]?.n ?? -1;

describe('PostgresLedger fencing', () => {
  it('bumps the epoch on each claim, creating the session record the first time', async () => {
    const ledger = open(freshSchema());
    expect(await ledger.claimSession('s1', 5)).toBe(1);
    expect(await ledger.getSession('s1')).toMatchObject({
      sessionKey: 's1',
      epoch: 1,
      lastSeq: 0,
      override: {},
    });
    expect(await ledger.claimSession('s1', 6)).toBe(2);
    expect((await ledger.getSession('s1'))?.epoch).toBe(2);
  });

  it('refuses every write of the old owner with fenced once another ledger claimed the session, writing nothing', async () => {
    const schema = freshSchema();
    const [oldOwner, newOwner] = [open(schema), open(schema)];
    const epoch = await oldOwner.claimSession('s1', 1);
    const fenced = oldOwner.fenced({ sessionKey: 's1', epoch });
    await fenced.appendTurns([turn('s1', 'r1', 0)]);
    await fenced.putSession(session('s1', { epoch: 0 }));
    expect((await newOwner.getSession('s1'))?.epoch).toBe(epoch);

    const next = await newOwner.claimSession('s1', 2);
    expect(next).toBe(epoch + 1);
    const writes: Array<() => Promise<unknown>> = [
      () => fenced.appendTurns([turn('s1', 'r1', 1)]),
      () => fenced.openRun(run('s1', 'r2')),
      () => fenced.appendMessage(message('s1', 'm9', 9)),
      () => fenced.appendEvents([event(1, 's1', 1)]),
      () => fenced.putSession(session('s1', { epoch: 0 })),
      () => fenced.saveProfileState('oa-1', { errorCount: 0 }, 3),
    ];
    for (const write of writes) {
      const error = await rejection(write());
      expect(error.code).toBe('fenced');
      expect(error.details).toMatchObject({ sessionKey: 's1', epoch });
    }
    expect(await count(schema, 'turns')).toBe(1);
    expect(await count(schema, 'runs')).toBe(0);
    expect(await count(schema, 'inbox')).toBe(0);
    expect(await count(schema, 'events')).toBe(0);
    expect(await count(schema, 'auth_profiles')).toBe(0);
    expect((await newOwner.getSession('s1'))?.epoch).toBe(next);

    const current = newOwner.fenced({ sessionKey: 's1', epoch: next });
    await current.appendTurns([turn('s1', 'r3', 0)]);
    expect((await oldOwner.listTurns('s1')).map((record) => record.runId)).toEqual(['r1', 'r3']);
  });

  it('refuses a fenced write alone: the unfenced writes of the same turn commit', async () => {
    const schema = freshSchema();
    const ledger = open(schema);
    await ledger.claimSession('s1', 1);
    const stale = ledger.fenced({ sessionKey: 's1', epoch: 0 });
    const [refused, accepted] = await Promise.allSettled([
      stale.appendMessage(message('s1', 'm1', 1)),
      ledger.appendMessage(message('s1', 'm2', 2)),
    ]);
    expect(refused.status === 'rejected' && isRuntimeError(refused.reason, 'fenced')).toBe(true);
    expect(accepted.status).toBe('fulfilled');
    expect((await ledger.listMessages('s1')).map((record) => record.messageId)).toEqual(['m2']);
  });

  it('lands nothing a stopped worker writes after SIGCONT once another process claimed its session', async () => {
    const schema = freshSchema();
    const newOwner = open(schema);
    await newOwner.ready();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        new URL('./postgres-fence-child.ts', import.meta.url).pathname,
        postgresUrl,
        schema,
        's1',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: Array<{ claimed?: number; ok?: number; refused?: number; code?: string }> = [];
    const stderr: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    const writing = createDeferred<void>();
    createInterface({ input: child.stdout }).on('line', (text) => {
      lines.push(JSON.parse(text) as (typeof lines)[number]);
      if (lines.filter((line) => line.ok !== undefined).length === 20) writing.resolve();
    });
    void exited.then(() => writing.reject(new Error(`child exited early: ${stderr.join('')}`)));
    await writing.promise;

    child.kill('SIGSTOP');
    // If the child stopped inside a transaction, its fence lock holds the claim until the server ends that
    // transaction (idleInTransactionTimeoutMs: 1000 in the child).
    const claimed = await newOwner.claimSession('s1', Date.now());
    const landed = await rawQuery<{ content: string }>(schema, 'SELECT content FROM turns ORDER BY id');
    child.kill('SIGCONT');
    expect(await exited).toBe(0);

    const childEpoch = lines[0]?.claimed;
    expect(claimed).toBe((childEpoch ?? 0) + 1);
    const after = await rawQuery<{ content: string }>(schema, 'SELECT content FROM turns ORDER BY id');
    expect(after).toEqual(landed);
    const refusals = lines.filter((line) => line.refused !== undefined);
    expect(refusals.length).toBeGreaterThanOrEqual(20);
    expect(refusals.slice(-20).map((line) => line.code)).toEqual(Array.from({ length: 20 }, () => 'fenced'));
    // Besides fenced, only the write in flight when the child stopped inside a transaction may fail: the server
    // ended that transaction and its connection.
    expect(refusals.filter((line) => line.code !== 'fenced').length).toBeLessThanOrEqual(1);
    // Every write the child saw acknowledged is in the database; none of those refused is.
    const stored = new Set(after.map((row) => row.content));
    for (const line of lines) {
      if (line.ok !== undefined) expect(stored.has(`write ${line.ok}`)).toBe(true);
      if (line.refused !== undefined) expect(stored.has(`write ${line.refused}`)).toBe(false);
    }
  });
});
