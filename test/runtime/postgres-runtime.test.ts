import { afterEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  isRuntimeError,
  type ModelProvider,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { scriptedModel, type Script } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { createPostgresLedger } from '../../src/ledger/postgres/ledger.js';
import { freshSchema, postgresUrl } from '../support/postgres.js';

type Runtime = ReturnType<typeof createRuntime>;
const running: Runtime[] = [];
afterEach(async () => {
  for (const runtime of running.splice(0)) await runtime.close();
});

// One id generator per test, shared by both "processes" of a restart: run ids must not repeat across it.
let ids = sequentialIds();

/** A runtime on the real clock whose ledger is the Postgres one, opened by the runtime from its options. */
function start(schema: string, script: Script, options: Partial<RuntimeOptions> = {}): Runtime {
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    providers: { scripted: scriptedModel(script) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
    ids,
    ...options,
  });
  running.push(runtime);
  return runtime;
}

async function stop(runtime: Runtime): Promise<void> {
  running.splice(running.indexOf(runtime), 1);
  await runtime.close();
}

describe('createRuntime on the Postgres ledger', () => {
  afterEach(() => {
    ids = sequentialIds();
  });

  it('runs a message end to end and finds its transcript, runs and events after a restart', async () => {
    const schema = freshSchema();
    const first = start(schema, [{ text: 'Hello there' }]);
    const chat = first.session('telegram:1');
    expect(await chat.send({ id: 'a', text: 'hi' })).toMatchObject({
      messageId: 'a',
      disposition: 'started',
    });
    expect(await chat.waitForEnd({ timeoutMs: 10_000 })).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'Hello there' },
    });
    await stop(first);

    const second = start(schema, []);
    const again = second.session('telegram:1');
    expect((await again.transcript()).map((turn) => [turn.role, turn.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello there'],
    ]);
    expect((await again.runs()).map((run) => run.status)).toEqual(['completed']);
    const events: RuntimeEvent[] = [];
    for await (const event of second.events({ after: 0, types: ['run.started', 'run.ended'] })) {
      events.push(event);
      if (events.length === 2) break;
    }
    expect(events.map((event) => event.type)).toEqual(['run.started', 'run.ended']);
    expect(events[1]?.cursor).toBeGreaterThan(events[0]?.cursor ?? Infinity);
  });

  it('runs followup messages one run each, in arrival order, when they arrive during a run', async () => {
    const schema = freshSchema();
    const gate = createDeferred<void>();
    const scripted = scriptedModel((_request, callIndex) => ({ text: `reply ${callIndex + 1}` }));
    // The first model call waits for the gate, so the later messages surely arrive while it runs.
    let calls = 0;
    const gated: ModelProvider = {
      ...scripted,
      stream: (request, options) =>
        (async function* () {
          if (++calls === 1) await gate.promise;
          yield* scripted.stream(request, options);
        })(),
    };
    const runtime = start(schema, [], { providers: { scripted: gated } });
    const chat = runtime.session('telegram:1');
    expect(await chat.send({ id: 'm1', text: 'one' })).toMatchObject({ disposition: 'started' });
    expect(await chat.send({ id: 'm2', text: 'two' })).toMatchObject({ disposition: 'queued' });
    expect(await chat.send({ id: 'm3', text: 'three' })).toMatchObject({ disposition: 'queued' });
    gate.resolve();
    for (let ended = 0; ended < 3;) {
      const result = await chat.waitForEnd({ timeoutMs: 10_000 });
      expect(result.status).toBe('ended');
      ended = (await chat.runs()).filter((run) => run.status === 'completed').length;
    }
    expect((await chat.runs()).map((run) => [run.messageIds, run.text])).toEqual([
      [['m1'], 'reply 1'],
      [['m2'], 'reply 2'],
      [['m3'], 'reply 3'],
    ]);
  });

  it('resumes a run cut off by a crash under its run id, then runs the messages it left pending, after a restart', async () => {
    const schema = freshSchema();
    // "Process A": its ledger is closed under it mid-run, as a crash leaves the database.
    const ledger = createPostgresLedger({ connectionString: postgresUrl, schema });
    const crashed = createRuntime({
      ledger,
      providers: { scripted: scriptedModel([{ hang: true }]) },
      model: { provider: 'scripted', model: 'm' },
      queue: { mode: 'followup', debounceMs: 0 },
      ids,
      onError: () => undefined,
    });
    // Never closed, as a crashed process is not: its model call hangs and its ledger is gone.
    const chat = crashed.session('telegram:1');
    expect(await chat.send({ id: 'm1', text: 'one' })).toMatchObject({ disposition: 'started' });
    expect(await chat.send({ id: 'm2', text: 'two' })).toMatchObject({ disposition: 'queued' });
    await ledger.close();

    const runtime = start(schema, [{ text: 'the answer to one' }, { text: 'after the crash' }]);
    const again = runtime.session('telegram:1');
    let runs = await again.runs();
    while (runs.filter((run) => run.status === 'completed').length < 2) {
      await again.waitForEnd({ timeoutMs: 10_000 });
      runs = await again.runs();
    }
    expect(runs.map((run) => [run.status, run.messageIds, run.text])).toEqual([
      ['completed', ['m1'], 'the answer to one'],
      ['completed', ['m2'], 'after the crash'],
    ]);
  });

  it('refuses a bad Postgres option at construction with invalid_input', () => {
    let error: unknown;
    try {
      createRuntime({
        ledger: { postgres: { connectionString: postgresUrl, schema: 'Bad-Name' } },
        providers: { scripted: scriptedModel([]) },
        model: { provider: 'scripted', model: 'm' },
      });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
  });
});
