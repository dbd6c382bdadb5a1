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
