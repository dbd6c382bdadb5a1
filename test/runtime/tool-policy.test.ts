import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool, isRuntimeError } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { createHarness } from '../support/runtime-harness.js';

const ran: string[] = [];
const tool = (name: string) =>
  defineTool({
    name,
    description: `the ${name} tool`,
    input: z.object({}),
    execute: () => {
      ran.push(name);
      return 'done';
    },
  });
const tools = [tool('exec'), tool('web_search'), tool('web_fetch'), tool('refund')];

async function run(h: ReturnType<typeof createHarness>) {
  const chat = h.runtime.session('telegram:1');
  await chat.send('go');
  const ended = chat.waitForEnd();
  await h.clock.advance(0);
  return ended;
}

describe('createRuntime({ toolPolicy })', () => {
  it('shows the model only the tools the layers leave, with globs and groups', async () => {
    const h = createHarness([{ text: 'ok' }], {
      tools,
      toolGroups: { money: ['refund'] },
      toolPolicy: [{ deny: ['exec'] }, { allow: ['web_*', 'group:money'], deny: ['web_fetch'] }],
    });
    await run(h);
    expect(h.model.requests[0]?.tools.map((spec) => spec.name)).toEqual(['web_search', 'refund']);
    await h.close();
  });

  it('never grants back in a later layer what an earlier one removed', async () => {
    const h = createHarness([{ text: 'ok' }], {
      tools,
      toolPolicy: [{ deny: ['exec'] }, { allow: ['exec'] }],
    });
    await run(h);
    expect(h.model.requests[0]?.tools).toEqual([]);
    await h.close();
  });

  it('fails the run with tool_denied when the model calls a denied tool anyway, without feeding it back', async () => {
    ran.length = 0;
    const h = createHarness([{ toolCalls: [{ name: 'exec', args: {} }] }, { text: 'never asked' }], {
      tools,
      toolPolicy: [{ deny: ['exec'] }],
    });
    expect(await run(h)).toMatchObject({ run: { status: 'failed', error: { code: 'tool_denied' } } });
    expect(h.model.calls).toBe(1);
    expect(ran).toEqual([]);
    expect(h.of('tool.failed')).toMatchObject([{ tool: 'exec', error: { code: 'tool_denied' } }]);
    await h.close();
  });

  it('refuses a policy naming an unknown group at construction with invalid_input', () => {
    let error: unknown;
    try {
      createRuntime({
        ledger: createMemoryLedger(),
        providers: { scripted: scriptedModel([]) },
        model: { provider: 'scripted', model: 'm' },
        tools,
        toolPolicy: [{ allow: ['group:nope'] }],
      });
    } catch (caught) {
      error = caught;
    }
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).toContain('nope');
  });
});

describe('session.configureTools', () => {
  it("narrows the runtime's layers for one session only, and never grants back what they removed", async () => {
    const h = createHarness([{ text: 'a' }, { text: 'b' }], {
      tools,
      toolPolicy: [{ deny: ['exec'] }],
    });
    const narrowed = h.runtime.session('telegram:1');
    await narrowed.configureTools({ allow: ['web_*', 'exec'], deny: ['web_fetch'] });
    await narrowed.send('go');
    await narrowed.waitForEnd();
    const other = h.runtime.session('telegram:2');
    await other.send('go');
    await other.waitForEnd();
    expect(h.model.requests.map((request) => request.tools.map((spec) => spec.name))).toEqual([
      ['web_search'],
      ['web_search', 'web_fetch', 'refund'],
    ]);
    await h.close();
  });

  it('refuses the session-denied tool at dispatch with tool_denied', async () => {
    const h = createHarness([{ toolCalls: [{ name: 'refund', args: {} }] }], { tools });
    const chat = h.runtime.session('telegram:1');
    await chat.configureTools({ deny: ['refund'] });
    await chat.send('refund me');
    expect(await chat.waitForEnd()).toMatchObject({
      run: { status: 'failed', error: { code: 'tool_denied' } },
    });
    await h.close();
  });

  it('is cleared with null, and refuses bad layers with invalid_input changing nothing', async () => {
    const h = createHarness([{ text: 'a' }], { tools, toolGroups: { money: ['refund'] } });
    const chat = h.runtime.session('telegram:1');
    await chat.configureTools({ deny: ['group:money'] });
    for (const bad of [{ deny: ['group:nope'] }, { allow: 'web_*' }, { block: [] }, 'everything']) {
      let error: unknown;
      try {
        await chat.configureTools(bad as never);
      } catch (caught) {
        error = caught;
      }
      expect(isRuntimeError(error, 'invalid_input'), JSON.stringify(bad)).toBe(true);
    }
    await chat.configureTools(null);
    await chat.send('go');
    await chat.waitForEnd();
    expect(h.model.requests[0]?.tools.map((spec) => spec.name)).toContain('refund');
    await h.close();
  });

  it('survives hibernation and a restart with the session record', async () => {
    const ledger = createMemoryLedger();
    const options = { ledger, tools, model: { provider: 'scripted', model: 'm' } } as const;
    const first = createRuntime({ ...options, providers: { scripted: scriptedModel([]) } });
    await first.session('telegram:1').configureTools({ deny: ['web_*'] });
    await first.close();
    const model = scriptedModel([{ text: 'ok' }]);
    const second = createRuntime({ ...options, providers: { scripted: model } });
    const chat = second.session('telegram:1');
    await chat.send('go');
    await chat.waitForEnd();
    expect(model.requests[0]?.tools.map((spec) => spec.name)).toEqual(['exec', 'refund']);
    await second.close();
    await ledger.close();
  });
});

describe('a batch with a denied call', () => {
  it('lets launched siblings settle, then fails the run with tool_denied', async () => {
    const holder: { clock?: { sleep(ms: number): Promise<void> } } = {};
    const slow = defineTool({
      name: 'slow',
      description: 'takes 100 ms',
      input: z.object({}),
      execute: async () => {
        await holder.clock?.sleep(100);
        return 'slow done';
      },
    });
    const h = createHarness(
      [
        {
          toolCalls: [
            { id: 's', name: 'slow', args: {} },
            { id: 'e', name: 'exec', args: {} },
          ],
        },
      ],
      { tools: [slow, ...tools], toolPolicy: [{ deny: ['exec'] }] },
    );
    holder.clock = h.clock;
    const chat = h.runtime.session('telegram:1');
    await chat.send('go');
    const ended = chat.waitForEnd();
    await h.clock.advance(100);
    expect(await ended).toMatchObject({ run: { status: 'failed', error: { code: 'tool_denied' } } });
    const types = h.events.map((event) => event.type);
    expect(types.indexOf('tool.succeeded')).toBeGreaterThan(-1);
    expect(types.indexOf('tool.succeeded')).toBeLessThan(types.indexOf('run.ended'));
    await h.close();
  });
});
