import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type RuntimeEvent } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { freshSchema, postgresUrl } from '../support/postgres.js';

type Runtime = ReturnType<typeof createRuntime>;
const running: Runtime[] = [];
afterEach(async () => {
  for (const runtime of running.splice(0)) await runtime.close();
});

/** A cluster worker in this process (its own connections and worker id) on `schema`. */
function worker(schema: string, replies: string[]): Runtime {
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    cluster: { leaseMs: 10_000, pollMs: 100, scanMs: 250 },
    providers: { scripted: scriptedModel(replies.map((text) => ({ text }))) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
  });
  running.push(runtime);
  return runtime;
}

/** The first `count` events of a stream whose types are in `types`. */
async function take(stream: AsyncIterable<RuntimeEvent>, count: number): Promise<RuntimeEvent[]> {
  const taken: RuntimeEvent[] = [];
  for await (const event of stream) {
    taken.push(event);
    if (taken.length === count) break;
  }
  return taken;
}

describe('event streams of a cluster worker', { timeout: 60_000 }, () => {
  it('follow the runs another worker owns, live and in cursor order', async () => {
    const schema = freshSchema();
    const owner = worker(schema, ['first reply', 'second reply']);
    const other = worker(schema, []);
    const types = ['run.started', 'run.ended'] as const;
    // Opened on the worker that will not own the session, before anything happened.
    const live = take(other.session('chat').events({ after: 0, types: [...types] }), 4);
    const everything = take(other.events({ after: 0, types: [...types] }), 4);
    await owner.session('chat').send({ id: 'm1', text: 'one' });
    await owner.session('chat').waitForEnd({ timeoutMs: 10_000 });
    // The second message, sent through the other worker, is forwarded to the owner.
    expect(await other.session('chat').send({ id: 'm2', text: 'two' })).toMatchObject({
      disposition: 'started',
    });
    const seen = await live;
    expect(seen.map((event) => [event.type, event.sessionKey])).toEqual([
      ['run.started', 'chat'],
      ['run.ended', 'chat'],
      ['run.started', 'chat'],
      ['run.ended', 'chat'],
    ]);
    expect(seen.map((event) => (event.type === 'run.ended' ? event.text : undefined))).toEqual([
      undefined,
      'first reply',
      undefined,
      'second reply',
    ]);
    const cursors = (await everything).map((event) => event.cursor);
    expect(cursors).toEqual([...cursors].sort((left, right) => left - right));
    expect(new Set(cursors).size).toBe(4);
  });
});
