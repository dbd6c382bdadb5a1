import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger, type RuntimeEvent, type RuntimeOptions } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type ScriptEntry } from 'agentlanes/testing';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentlanes-recovery-'));
  dirs.push(dir);
  return join(dir, 'ledger.db');
}

// One id generator per test, shared by both of its "processes": run ids must not repeat across a restart.
let ids = sequentialIds();
beforeEach(() => {
  ids = sequentialIds();
});

/**
 * "Process A" works on the file until it is cut off: its ledger is closed under it, as a crash would leave the
 * file (what was committed stays, nothing more is written). Its clock never advances again.
 */
async function crashAfter(
  path: string,
  script: ScriptEntry[],
  work: (
    send: (id: string, text: string) => Promise<unknown>,
    advance: (ms: number) => Promise<void>,
  ) => Promise<void>,
) {
  const clock = fakeClock({ now: 0 });
  const ledger = createSqliteLedger({ path });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel(script, { clock }) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 100 },
    clock,
    ids,
    onError: () => undefined,
  });
  const chat = runtime.session('telegram:1');
  await work(
    (id, text) => chat.send({ id, text }),
    (ms) => clock.advance(ms),
  );
  await ledger.close();
}

/** "Process B": a fresh runtime on the same file, recording every event it replays and emits. */
function restart(path: string, script: ScriptEntry[], recovery?: RuntimeOptions['recovery']) {
  const clock = fakeClock({ now: 50_000 });
  const model = scriptedModel(script, { clock });
  const runtime = createRuntime({
    ledger: { path },
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 100 },
    clock,
    ids,
    ...(recovery === undefined ? {} : { recovery }),
  });
  const events: RuntimeEvent[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    for await (const event of runtime.events({ signal: stop.signal })) events.push(event);
  })();
  return {
    runtime,
    clock,
    model,
    events,
    async close() {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
      stop.abort();
      await reading;
    },
  };
}

describe('createRuntime (recovery on start)', () => {
  it('closes a crashed run as crashed with its partial text and runs the pending messages in order, with crashedRuns close', async () => {
    const path = tempDb();
    await crashAfter(path, [{ text: 'one two three four', tokenDelayMs: 100 }], async (send, advance) => {
      await send('a', 'first');
      await send('b', 'second');
      await send('c', 'third');
      await advance(150); // 'one' and ' two' streamed, the run is still open
    });
    const b = restart(path, [{ text: 'answer b' }, { text: 'answer c' }], { crashedRuns: 'close' });
    const chat = b.runtime.session('telegram:1');
    await b.clock.advance(0);
    const runs = await chat.runs();
    expect(runs[0]).toMatchObject({ runId: 'run_1', status: 'crashed', text: 'one two', messageIds: ['a'] });
    expect(runs[0]?.endedAt).toBe(50_000);
    await b.clock.advance(100);
    expect(b.model.requests.map((request) => request.messages.at(-1)?.content)).toEqual(['second', 'third']);
    expect((await chat.runs()).map((run) => [run.runId, run.status, run.messageIds])).toEqual([
      ['run_1', 'crashed', ['a']],
      ['run_2', 'completed', ['b']],
      ['run_3', 'completed', ['c']],
    ]);
    const crashedEnd = b.events.find((event) => event.type === 'run.ended' && event.status === 'crashed');
    expect(crashedEnd).toMatchObject({ runId: 'run_1', text: 'one two', error: { code: 'internal' } });
    // Never reused across the crash; gaps are coalesced token deltas (one row keeps the last token's seq).
    const seqs = b.events.filter((event) => event.sessionKey === 'telegram:1').map((event) => event.seq);
    expect(seqs.every((seq, index) => index === 0 || seq > (seqs[index - 1] as number))).toBe(true);
    expect(seqs.at(-1)).toBeGreaterThan(10);
    await b.close();
  });

  it('answers a redelivered id as duplicate after a crash that left no session snapshot', async () => {
    const path = tempDb();
    await crashAfter(path, [{ text: 'ok' }], async (send, advance) => {
      await send('a', 'first');
      await advance(10);
    });
    const b = restart(path, []);
    expect(await b.runtime.session('telegram:1').send({ id: 'a', text: 'first' })).toEqual({
      messageId: 'a',
      disposition: 'duplicate',
    });
    await b.close();
  });

  it('continues the inbox order after a crash, so a new message is recorded after the old ones', async () => {
    const path = tempDb();
    await crashAfter(path, [{ text: 'ok' }], async (send, advance) => {
      await send('a', 'first');
      await send('b', 'second');
      await advance(200);
    });
    const b = restart(path, [{ text: 'ok again' }]);
    const chat = b.runtime.session('telegram:1');
    expect(await chat.send({ id: 'c', text: 'third' })).toMatchObject({ disposition: 'started' });
    await b.clock.advance(10);
    const ledger = createSqliteLedger({ path, readonly: true });
    expect(
      (await ledger.listMessages('telegram:1')).map((record) => [
        record.messageId,
        record.order,
        record.status,
      ]),
    ).toEqual([
      ['a', 1, 'consumed'],
      ['b', 2, 'consumed'],
      ['c', 3, 'consumed'],
    ]);
    await ledger.close();
    await b.close();
  });

  it('replays the events of the first process with the same cursors after the restart', async () => {
    const path = tempDb();
    await crashAfter(path, [{ text: 'hello there' }], async (send, advance) => {
      await send('a', 'first');
      await advance(10);
    });
    const reader = createSqliteLedger({ path, readonly: true });
    const before = await reader.readEvents({});
    await reader.close();
    const b = restart(path, []);
    await b.clock.advance(0);
    expect(b.events.slice(0, before.length)).toEqual(before);
    expect(before.at(-1)).toMatchObject({ type: 'run.ended', status: 'completed' });
    await b.close();
  });
});

describe('createRuntime (ledger retention)', () => {
  it('prunes events older than eventsMaxAgeMs every hour and keeps the runs and the transcript', async () => {
    const path = tempDb();
    const clock = fakeClock({ now: 0 });
    const runtime = createRuntime({
      ledger: { path, retention: { eventsMaxAgeMs: 60_000 } },
      providers: { scripted: scriptedModel([{ text: 'old answer' }, { text: 'new answer' }], { clock }) },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids,
    });
    const chat = runtime.session('telegram:1');
    await chat.send({ id: 'a', text: 'old question' });
    await clock.advance(3_590_000);
    await chat.send({ id: 'b', text: 'new question' });
    await clock.advance(10_000); // the hourly prune runs at 3,600,000: events before 3,540,000 go
    const reader = createSqliteLedger({ path, readonly: true });
    const kept = await reader.readEvents({});
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((event) => event.at >= 3_540_000)).toBe(true);
    expect(kept[0]).toMatchObject({ type: 'message.received', messageId: 'b' });
    expect((await reader.listRuns('telegram:1')).map((run) => run.text)).toEqual([
      'old answer',
      'new answer',
    ]);
    expect((await reader.listTurns('telegram:1')).map((turn) => turn.content)).toEqual([
      'old question',
      'old answer',
      'new question',
      'new answer',
    ]);
    await reader.close();
    const closing = runtime.close();
    await clock.runAll();
    await closing;
  });
});
