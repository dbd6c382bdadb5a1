import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSqliteLedger, createRuntime, defineTool, type Tool } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script, type ScriptEntry } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { createHarness } from '../support/runtime-harness.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

function plainTool(name: string): Tool {
  return defineTool({ name, description: name, input: z.object({}), execute: () => `${name} ran` });
}

const task = 'find the order';

/** The parent asks for a subagent, then answers with the tool result; the child answers with `child`. */
function routed(child: (callIndex: number) => ScriptEntry): Script {
  return (request, callIndex) => {
    if (request.messages[0]?.content === task) return child(callIndex);
    const result = request.messages.find((message) => message.role === 'tool');
    if (result === undefined) return { toolCalls: [{ id: 'c1', name: 'spawn_subagent', args: { task } }] };
    return { text: `parent got: ${result.content}` };
  };
}

describe('subagents', () => {
  it("runs the child with the parent's tools narrowed by the deny list and the configured layer, answering the call", async () => {
    const tools = ['search', 'sessions_list', 'cron', 'refund', 'memory_get'].map(plainTool);
    const h = createHarness(
      routed(() => ({ text: 'order A-1 found' })),
      {
        tools,
        toolPolicy: [{ deny: ['memory_get'] }],
        subagents: { enabled: true, toolPolicy: { deny: ['refund'] } },
      },
    );
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'go' });
    const ended = await parent.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({ run: { status: 'completed', text: 'parent got: order A-1 found' } });
    const names = (index: number) => h.model.requests[index]?.tools.map((tool) => tool.name).sort();
    expect(names(0)).toEqual(['cron', 'refund', 'search', 'sessions_list', 'spawn_subagent']);
    expect(names(1)).toEqual(['search']);
    expect(h.model.requests[1]?.messages).toEqual([{ role: 'user', content: task }]);
    await h.close();
    const [spawned] = h.of('subagent.spawned');
    const childKey = spawned?.childKey ?? '';
    expect(childKey).toMatch(/^chat:p\/sub:/);
    expect(spawned).toMatchObject({
      sessionKey: 'chat:p',
      runId: 'run_1',
      toolCallId: 'c1',
      parentKey: 'chat:p',
      task,
    });
    expect(h.of('subagent.ended')).toMatchObject([{ sessionKey: 'chat:p', childKey, status: 'completed' }]);
    const childEnd = h.of('run.ended').find((event) => event.sessionKey === childKey);
    expect(childEnd).toMatchObject({ status: 'completed', text: 'order A-1 found' });
  });

  it('does not deadlock a parent waiting on its child when both lanes run one task at a time', async () => {
    const h = createHarness(
      routed(() => ({ text: 'done below' })),
      {
        globalLane: { concurrency: 1 },
        subagents: { enabled: true, concurrency: 1 },
      },
    );
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'go' });
    const ended = parent.waitForEnd({ timeoutMs: 5000 });
    await h.clock.advance(5000);
    expect(await ended).toMatchObject({
      status: 'ended',
      run: { status: 'completed', text: 'parent got: done below' },
    });
    await h.close();
  });

  it("aborts the child's running tool when the parent is aborted", async () => {
    const started = createDeferred<void>();
    const childSignal = createDeferred<AbortSignal>();
    const hold = defineTool({
      name: 'hold',
      description: 'waits for its signal',
      input: z.object({}),
      execute: (_args, { signal }) => {
        childSignal.resolve(signal);
        started.resolve();
        return new Promise<string>((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        });
      },
    });
    const h = createHarness(
      routed(() => ({ toolCalls: [{ id: 'h1', name: 'hold', args: {} }] })),
      {
        tools: [hold],
        subagents: { enabled: true },
      },
    );
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'go' });
    await started.promise;
    expect(await parent.abort({ reason: 'user sent /stop' })).toBe(true);
    expect(await parent.waitForEnd({ timeoutMs: 1000 })).toMatchObject({ run: { status: 'aborted' } });
    expect((await childSignal.promise).aborted).toBe(true);
    await h.close();
    const childKey = h.of('subagent.spawned')[0]?.childKey;
    expect(h.of('run.ended').find((event) => event.sessionKey === childKey)?.status).toBe('aborted');
    expect(h.of('subagent.ended')).toMatchObject([{ childKey, status: 'aborted' }]);
  });

  it('reports the subagent lane apart in stats(): one child running while it works, none once it ended', async () => {
    const started = createDeferred<void>();
    const release = createDeferred<void>();
    const hold = defineTool({
      name: 'hold',
      description: 'waits until released',
      input: z.object({}),
      execute: async () => {
        started.resolve();
        await release.promise;
        return 'released';
      },
    });
    const h = createHarness(
      routed((callIndex) =>
        callIndex === 1 ? { toolCalls: [{ id: 'h1', name: 'hold', args: {} }] } : { text: 'ok' },
      ),
      { tools: [hold], subagents: { enabled: true, concurrency: 3 } },
    );
    expect(h.runtime.stats().subagents).toEqual({ pending: 0, running: 0 });
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'go' });
    await started.promise;
    expect(h.runtime.stats().subagents).toEqual({ pending: 0, running: 1 });
    expect(Object.keys(h.runtime.stats().lanes)).not.toContain('subagent');
    release.resolve();
    expect(await parent.waitForEnd({ timeoutMs: 1000 })).toMatchObject({ run: { status: 'completed' } });
    expect(h.runtime.stats().subagents).toEqual({ pending: 0, running: 0 });
    await h.close();
  });

  it('refuses grandchildren at maxDepth: the child is not offered spawn_subagent and its call is refused', async () => {
    const h = createHarness(
      routed(() => ({ toolCalls: [{ id: 'g1', name: 'spawn_subagent', args: { task: 'deeper' } }] })),
      { subagents: { enabled: true, maxDepth: 1 } },
    );
    const parent = h.runtime.session('chat:p');
    await parent.send({ id: 'a', text: 'go' });
    const ended = await parent.waitForEnd({ timeoutMs: 1000 });
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    const text = ended.status === 'ended' ? ended.run.text : '';
    expect(text).toMatch(/^parent got: .*subagent chat:p\/sub:\S+ failed: .*spawn_subagent.*denies/);
    expect(h.model.requests[1]?.tools.map((tool) => tool.name)).toEqual([]);
    await h.close();
    expect(h.of('subagent.spawned')).toHaveLength(1);
    const childKey = h.of('subagent.spawned')[0]?.childKey;
    expect(h.of('run.ended').find((event) => event.sessionKey === childKey)?.error?.code).toBe('tool_denied');
    expect(h.of('subagent.ended')).toMatchObject([
      { childKey, status: 'failed', error: { code: 'tool_denied' } },
    ]);
  });

  it('records both runs crashed, the child naming its parent run, and cancels a child still queued, after a crash (crashedRuns close)', async () => {
    const path = tempLedgerPath('subagents');
    const started = createDeferred<void>();
    const hold = defineTool({
      name: 'hold',
      description: 'never returns',
      input: z.object({}),
      execute: () => {
        started.resolve();
        return new Promise<string>(() => undefined);
      },
    });
    const ids = sequentialIds();
    const clock = fakeClock({ now: 0 });
    // Two children at once in a lane of one: the second waits in the lane, its task still pending.
    const script: Script = (request) =>
      request.messages[0]?.content === 'go'
        ? {
            toolCalls: [
              { id: 'c1', name: 'spawn_subagent', args: { task } },
              { id: 'c2', name: 'spawn_subagent', args: { task: 'second task' } },
            ],
          }
        : { toolCalls: [{ id: 'h1', name: 'hold', args: {} }] };
    const ledger = createSqliteLedger({ path });
    const first = createRuntime({
      ledger,
      providers: { scripted: scriptedModel(script, { clock }) },
      model: { provider: 'scripted', model: 'm' },
      tools: [hold],
      subagents: { enabled: true, concurrency: 1 },
      clock,
      ids,
      onError: () => undefined,
    });
    await first.session('chat:p').send({ id: 'a', text: 'go' });
    await started.promise;
    await ledger.close();
    const reopened = createSqliteLedger({ path });
    const model = scriptedModel([], { clock });
    const second = createRuntime({
      ledger: reopened,
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      subagents: { enabled: true },
      recovery: { crashedRuns: 'close' },
      clock,
      ids,
    });
    await second.session('chat:p').waitForEnd({ timeoutMs: 10 });
    const events = await reopened.readEvents({ sessionKey: 'chat:p', after: 0, limit: 100 });
    const children = events.flatMap((event) => (event.type === 'subagent.spawned' ? [event] : []));
    const [running, queued] = children.map((event) => event.childKey);
    expect(children.map((event) => event.task)).toEqual([task, 'second task']);
    expect(await reopened.listRuns('chat:p')).toMatchObject([{ runId: 'run_1', status: 'crashed' }]);
    const childRuns = await reopened.listRuns(running ?? '');
    expect(childRuns).toMatchObject([{ status: 'crashed', parentRunId: 'run_1', parentCallId: 'c1' }]);
    const childEvents = await reopened.readEvents({ sessionKey: running ?? '', after: 0, limit: 100 });
    expect(childEvents.filter((event) => event.type === 'run.ended')).toMatchObject([{ status: 'crashed' }]);
    expect(await reopened.listRuns(queued ?? '')).toEqual([]);
    expect(await reopened.listMessages(queued ?? '')).toMatchObject([
      { messageId: 'c2', status: 'cancelled' },
    ]);
    await second.close();
    expect(model.requests).toEqual([]);
    await reopened.close();
  });

  it('resumes a crashed child under its parent: the spawn call attaches to the child it started and answers with it', async () => {
    const path = tempLedgerPath('subagents');
    const childCalled = createDeferred<void>();
    const ids = sequentialIds();
    const clock = fakeClock({ now: 0 });
    // Before the crash the child's model call never ends; after it, the child answers.
    const before: Script = routed(() => {
      childCalled.resolve();
      return { hang: true };
    });
    const ledger = createSqliteLedger({ path });
    const first = createRuntime({
      ledger,
      providers: { scripted: scriptedModel(before, { clock }) },
      model: { provider: 'scripted', model: 'm' },
      subagents: { enabled: true },
      clock,
      ids,
      onError: () => undefined,
    });
    await first.session('chat:p').send({ id: 'a', text: 'go' });
    await childCalled.promise;
    await ledger.close(); // the process dies here: both runs are open

    const reopened = createSqliteLedger({ path });
    const model = scriptedModel(
      routed(() => ({ text: 'order A-1 found' })),
      { clock },
    );
    const second = createRuntime({
      ledger: reopened,
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      subagents: { enabled: true },
      clock,
      ids,
    });
    const parent = second.session('chat:p');
    for (let step = 0; step < 10 && parent.status().state !== 'idle'; step++) await clock.advance(1000);
    await parent.waitForEnd({ timeoutMs: 1000 });
    expect(await reopened.listRuns('chat:p')).toMatchObject([
      { runId: 'run_1', status: 'completed', text: 'parent got: order A-1 found' },
    ]);
    const events = await reopened.readEvents({ sessionKey: 'chat:p', after: 0, limit: 200 });
    const spawned = events.flatMap((event) => (event.type === 'subagent.spawned' ? [event.childKey] : []));
    expect(spawned).toHaveLength(1);
    // One child, one task, one run: resumed, not started again.
    const childKey = spawned[0] ?? '';
    expect(await reopened.listMessages(childKey)).toMatchObject([{ messageId: 'c1' }]);
    expect(await reopened.listRuns(childKey)).toMatchObject([
      { status: 'completed', text: 'order A-1 found', parentRunId: 'run_1', parentCallId: 'c1' },
    ]);
    expect(events.some((event) => event.type === 'tool.in_doubt')).toBe(false);
    const closing = second.close();
    await clock.runAll();
    await closing;
    await reopened.close();
  });
});
