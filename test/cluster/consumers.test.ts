import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError, type RuntimeEvent } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { openClusterDatabase } from '../../src/cluster/cluster-db.js';
import { nowMs } from '../../src/cluster/cluster-schema.js';
import {
  claimConsumer,
  consumerKey,
  pruneConsumers,
  releaseConsumer,
} from '../../src/cluster/consumer-claims.js';
import { createDeferred } from '../../src/core/deferred.js';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

type Runtime = ReturnType<typeof createRuntime>;
const running: Runtime[] = [];
afterEach(async () => {
  for (const runtime of running.splice(0)) await runtime.close();
});

/** A cluster worker in this process (its own connections and worker id) on `schema`. */
function worker(schema: string): Runtime {
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    cluster: { leaseMs: 2_000, pollMs: 100, scanMs: 250 },
    providers: { scripted: scriptedModel((_request, callIndex) => ({ text: `reply ${callIndex}` })) },
    model: { provider: 'scripted', model: 'm' },
  });
  running.push(runtime);
  return runtime;
}

/** Poll `check` (the database or a reader's events) until it holds; fails after 20 s instead of hanging. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A loop reading a stream into `seen`; `ended` settles with 'ended' or the error the stream threw. */
interface Reader {
  readonly seen: RuntimeEvent[];
  readonly ended: Promise<unknown>;
  stop(): void;
}

/** Read `open`'s stream until it ends, `stop` is called, or (with `stopAfter`) that many events were handled. */
function reader(open: (signal: AbortSignal) => AsyncIterable<RuntimeEvent>, stopAfter?: number): Reader {
  const controller = new AbortController();
  const seen: RuntimeEvent[] = [];
  const loop = async (): Promise<void> => {
    for await (const event of open(controller.signal)) {
      seen.push(event);
      if (seen.length === stopAfter) break;
    }
  };
  const ended = loop().then(
    () => 'ended',
    (error: unknown) => error,
  );
  return { seen, ended, stop: () => controller.abort() };
}

/** `runtime.events({ consumer: 'replies' })` of run.ended events, read by a loop. */
const replies = (runtime: Runtime, stopAfter?: number): Reader =>
  reader((signal) => runtime.events({ consumer: 'replies', types: ['run.ended'], signal }), stopAfter);

/** The worker that holds a consumer per `cluster_consumers`, if any (the table exists once a worker started). */
async function holderOf(schema: string, key: string): Promise<string | undefined> {
  const [table] = await rawQuery<{ found: boolean }>(
    schema,
    "SELECT to_regclass('cluster_consumers') IS NOT NULL AS found",
  );
  if (table?.found !== true) return undefined;
  const rows = await rawQuery<{ worker_id: string }>(
    schema,
    'SELECT worker_id FROM cluster_consumers WHERE consumer_key = $1',
    [key],
  );
  return rows[0]?.worker_id;
}

/** The stored position of the every-session consumer 'replies'. */
async function committed(schema: string): Promise<number | undefined> {
  const rows = await rawQuery<{ cursor: string }>(
    schema,
    "SELECT cursor FROM consumers WHERE consumer = 'replies' AND session_key = ''",
  );
  return rows[0] === undefined ? undefined : Number(rows[0].cursor);
}

/** The cursors of every run.ended event in the log. */
async function runEnds(schema: string): Promise<number[]> {
  const rows = await rawQuery<{ cursor: string }>(
    schema,
    "SELECT cursor FROM events WHERE type = 'run.ended' ORDER BY cursor",
  );
  return rows.map((row) => Number(row.cursor));
}

/** Send one message to each of `sessions` through `via`. */
async function sendTo(via: Runtime, sessions: string[]): Promise<void> {
  for (const key of sessions) await via.session(key).send({ id: `m-${key}`, text: 'hello' });
}

const cursorsOf = (events: RuntimeEvent[]): number[] => events.map((event) => event.cursor);
const everySession = consumerKey('replies', undefined);

describe('durable consumers of cluster workers', { timeout: 60_000 }, () => {
  it('are read by one worker at a time: the other waits, then takes over after the last commit', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const first = replies(a);
    await until(async () => (await holderOf(schema, everySession)) !== undefined, 'a to hold');
    const holder = await holderOf(schema, everySession);
    const second = replies(b);
    await sendTo(b, ['chat-1', 'chat-2', 'chat-3']);
    await until(() => first.seen.length === 3, 'a to read three replies');
    const ends = await runEnds(schema);
    await until(async () => (await committed(schema)) === Math.max(...ends), 'a to commit');
    expect(cursorsOf(first.seen).sort((x, y) => x - y)).toEqual(ends);
    // B still waits: it read nothing and the claim is still A's.
    expect(second.seen).toEqual([]);
    expect(await holderOf(schema, everySession)).toBe(holder);

    first.stop();
    expect(await first.ended).toBe('ended');
    await until(async () => (await holderOf(schema, everySession)) !== holder, 'b to take over');
    await sendTo(a, ['chat-4', 'chat-5']);
    await until(() => second.seen.length === 2, 'b to read the two new replies');
    const all = await runEnds(schema);
    expect(cursorsOf(second.seen)).toEqual(all.filter((cursor) => !ends.includes(cursor)));
    expect(first.seen).toHaveLength(3);
  });

  it('hand a standby the events after the holder’s last committed position when the holder leaves its loop', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    // Sent before anyone reads: the holder replays them, handles two and breaks out of its loop.
    await sendTo(b, ['chat-1', 'chat-2', 'chat-3', 'chat-4', 'chat-5']);
    await until(async () => (await runEnds(schema)).length === 5, 'five runs to end');
    const gate = createDeferred<void>();
    const handled: RuntimeEvent[] = [];
    const first = (async () => {
      for await (const event of a.events({ consumer: 'replies', types: ['run.ended'] })) {
        handled.push(event);
        if (handled.length === 2) break;
        await gate.promise;
      }
    })();
    await until(() => handled.length === 1, 'a to hold and handle one');
    const second = replies(b);
    gate.resolve();
    await first;
    await until(() => second.seen.length === 3, 'b to read the other three');
    const ends = await runEnds(schema);
    expect(cursorsOf(handled)).toEqual(ends.slice(0, 2));
    expect(cursorsOf(second.seen)).toEqual(ends.slice(2));
    second.stop();
    expect(await second.ended).toBe('ended');
  });

  it('pass to a standby when the holder’s runtime closes, none of its committed events again', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const first = replies(a);
    await until(async () => (await holderOf(schema, everySession)) !== undefined, 'a to hold');
    const second = replies(b);
    await sendTo(b, ['chat-1', 'chat-2']);
    await until(() => first.seen.length === 2, 'a to read two replies');
    const ends = await runEnds(schema);
    await until(async () => (await committed(schema)) === Math.max(...ends), 'a to commit');

    await a.close();
    expect(await first.ended).toBe('ended');
    await sendTo(b, ['chat-3']);
    await until(() => second.seen.length === 1, 'b to read the new reply');
    expect(cursorsOf(second.seen)).toEqual(
      (await runEnds(schema)).filter((cursor) => !ends.includes(cursor)),
    );
  });

  it('end a standby’s stream when its own runtime closes, while the holder reads on', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const first = replies(a);
    await until(async () => (await holderOf(schema, everySession)) !== undefined, 'a to hold');
    const second = replies(b);
    await sendTo(b, ['chat-1']);
    await until(() => first.seen.length === 1, 'a to read the reply');
    // B's loop waits for the consumer A holds. Its close must end that wait at once: before, close waited for the
    // stream until its timeout (30 s by default; this one would outlast the test).
    await b.close({ timeoutMs: 600_000 });
    expect(await second.ended).toBe('ended');
    expect(second.seen).toEqual([]);
    await sendTo(a, ['chat-2']);
    await until(() => first.seen.length === 2, 'a to read on');
  });

  it('pass to a standby when the holder’s lease runs out, and end the holder’s stream with fenced', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const first = replies(a);
    await until(async () => (await holderOf(schema, everySession)) !== undefined, 'a to hold');
    const holder = await holderOf(schema, everySession);
    const second = replies(b);
    await sendTo(b, ['chat-1', 'chat-2']);
    await until(() => first.seen.length === 2, 'a to read two replies');
    const ends = await runEnds(schema);
    await until(async () => (await committed(schema)) === Math.max(...ends), 'a to commit');

    // A "dies" as far as the cluster can tell: its lease is over (its next renewal finds it lost).
    await rawQuery(schema, 'UPDATE cluster_workers SET lease_until = 0 WHERE worker_id = $1', [holder]);
    const error = await first.ended;
    expect(isRuntimeError(error, 'fenced')).toBe(true);
    expect((error as Error).message).toBe('consumer "replies" was taken over by another worker');
    await until(async () => (await holderOf(schema, everySession)) !== holder, 'b to take over');
    await sendTo(b, ['chat-3']);
    await until(() => second.seen.length === 1, 'b to read the new reply');
    expect(cursorsOf(second.seen)).toEqual(
      (await runEnds(schema)).filter((cursor) => !ends.includes(cursor)),
    );
    expect(first.seen).toHaveLength(2);
  });

  it('claim a session consumer and the every-session consumer of the same name independently', async () => {
    const schema = freshSchema();
    const [a, b] = [worker(schema), worker(schema)];
    const every = replies(a);
    const ofChat = reader((signal) =>
      b.session('chat').events({ consumer: 'replies', types: ['run.ended'], signal }),
    );
    await sendTo(a, ['chat']);
    await until(() => every.seen.length === 1 && ofChat.seen.length === 1, 'both to read the reply');
    expect(cursorsOf(ofChat.seen)).toEqual(cursorsOf(every.seen));
    expect(await holderOf(schema, consumerKey('replies', 'chat'))).not.toBe(
      await holderOf(schema, everySession),
    );
  });

  it('refuse a second reader of a consumer in the same worker at once', async () => {
    const schema = freshSchema();
    const a = worker(schema);
    replies(a);
    await until(async () => (await holderOf(schema, everySession)) !== undefined, 'a to hold');
    const again = a.events({ consumer: 'replies' })[Symbol.asyncIterator]();
    await expect(again.next()).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('claimConsumer', () => {
  it('takes a consumer that is free, its own, or a dead worker’s, never a live one’s; pruneConsumers forgets gone workers’', async () => {
    const schema = freshSchema();
    const database = await openClusterDatabase({ connectionString: postgresUrl, schema });
    try {
      await database.query(
        `INSERT INTO cluster_workers (worker_id, started_at, lease_until)
         VALUES ('live', 0, ${nowMs} + 60000), ('other', 0, ${nowMs} + 60000), ('dead', 0, 0)`,
      );
      expect(await claimConsumer(database.query, 'k', 'dead')).toBe(true);
      expect(await claimConsumer(database.query, 'k', 'live')).toBe(true);
      expect(await claimConsumer(database.query, 'k', 'live')).toBe(true);
      expect(await claimConsumer(database.query, 'k', 'other')).toBe(false);
      await releaseConsumer(database.query, 'k', 'other');
      expect(await claimConsumer(database.query, 'k', 'other')).toBe(false);
      await releaseConsumer(database.query, 'k', 'live');
      expect(await claimConsumer(database.query, 'k', 'other')).toBe(true);
      // A claim of a worker whose row was pruned is forgotten; a live worker's stays.
      expect(await claimConsumer(database.query, 'gone', 'pruned')).toBe(true);
      await pruneConsumers(database.query);
      const left = await database.query<{ consumer_key: string }>(
        'SELECT consumer_key FROM cluster_consumers',
      );
      expect(left.rows).toEqual([{ consumer_key: 'k' }]);
    } finally {
      await database.close();
    }
  });
});
