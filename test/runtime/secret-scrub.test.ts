import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ModelProvider, type RuntimeOptions, type WaitResult } from 'agentlanes';
import type { Script } from 'agentlanes/testing';
import { secretForms } from '../../src/core/scrub-secrets.js';
import { createHarness } from '../support/runtime-harness.js';

/** The message of the error a waited-for run ended with. */
function errorMessageOf(result: WaitResult): string | undefined {
  return result.status === 'ended' ? result.run.error?.message : undefined;
}

// A key with the characters that change under URL and JSON encoding.
const key = 'sk-live+AbC/dEf=GhIjKlMnOpQr/StUv+WxYz==';
const variable = 'AGENTLANES_SCRUB_TEST_KEY';
// The key as providers echo it: raw, URL-encoded, JSON-escaped with "\/", and a 16-character prefix.
const echoes = [
  key,
  encodeURIComponent(key),
  JSON.stringify(key).slice(1, -1).replace(/\//g, '\\/'),
  key.slice(0, 16),
].join(' | ');
const profiles: RuntimeOptions['authProfiles'] = [
  { id: 'env-key', provider: 'scripted', type: 'api_key', secret: { env: variable } },
];

/** Every window of 12 characters of every form of the key found in `value` (serialised). */
function leaksIn(value: unknown): string[] {
  const text = JSON.stringify(value);
  const found: string[] = [];
  for (const form of secretForms(key)) {
    for (let start = 0; start + 12 <= form.length; start++) {
      if (text.includes(form.slice(start, start + 12))) found.push(form.slice(start, start + 12));
    }
  }
  return found;
}

/** Run one message, then gather everything a run leaves behind: result, events, runs, transcript. */
async function runAndCollect(h: ReturnType<typeof createHarness>) {
  const chat = h.runtime.session('telegram:1');
  await chat.send('hi');
  const ended = chat.waitForEnd({ timeoutMs: 600_000 });
  await h.clock.advance(0);
  const result = await ended;
  await h.clock.advance(0);
  return { result, events: h.events, runs: await chat.runs(), transcript: await chat.transcript() };
}

beforeEach(() => {
  process.env[variable] = key;
});
afterEach(() => {
  delete process.env[variable];
});

describe('secret scrubbing where errors leave a run', () => {
  it('scrubs a plain Error from a custom provider in every form when it echoes the key', async () => {
    const leaky: ModelProvider = {
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error(`upstream: ${echoes}`)) }),
      }),
    };
    const h = createHarness([], {
      providers: { scripted: leaky },
      authProfiles: profiles,
    });
    const left = await runAndCollect(h);
    expect(left.result).toMatchObject({ run: { status: 'failed', error: { code: 'internal' } } });
    expect(errorMessageOf(left.result)).toMatch(/^upstream: \*\*\*/);
    expect(h.of('run.ended')[0]?.error?.message).toContain('***');
    expect(leaksIn(left)).toEqual([]);
    await h.close();
  });

  it('scrubs the error of the compaction summary call when it echoes the key', async () => {
    const overflow = { error: { status: 400, message: 'prompt is too long: 210000 tokens' } };
    const script: Script = [overflow, { error: { status: 500, message: `summary failed for ${echoes}` } }];
    const h = createHarness(script, {
      authProfiles: profiles,
      compactor: async ({ messages, summarize }) => [
        { role: 'user', content: await summarize('summarise') },
        ...messages.slice(-1),
      ],
    });
    const left = await runAndCollect(h);
    expect(h.model.calls).toBe(2);
    expect(left.result).toMatchObject({ run: { status: 'failed' } });
    expect(errorMessageOf(left.result)).toContain('summary failed for ***');
    expect(leaksIn(left)).toEqual([]);
    await h.close();
  });

  it('scrubs a tool error in tool.failed and the transcript when the tool echoes the key', async () => {
    const leakyTool = defineTool({
      name: 'leaky',
      description: 'Fails with the key in its message',
      input: z.object({}),
      execute: () => {
        throw new Error(`bad key ${echoes}`);
      },
    });
    const script: Script = [{ toolCalls: [{ name: 'leaky', args: {} }] }, { text: 'done' }];
    const h = createHarness(script, { authProfiles: profiles, tools: [leakyTool] });
    const left = await runAndCollect(h);
    expect(left.result).toMatchObject({ run: { status: 'completed' } });
    expect(h.of('tool.failed')[0]?.error.message).toContain('bad key ***');
    expect(left.transcript.find((turn) => turn.role === 'tool')?.content).toContain('bad key ***');
    expect(leaksIn(left)).toEqual([]);
    await h.close();
  });

  it('scrubs a ProviderError that echoes the key URL-encoded or as a prefix', async () => {
    const h = createHarness([{ error: { status: 400, message: `bad request ${echoes}` } }], {
      authProfiles: profiles,
    });
    const left = await runAndCollect(h);
    expect(left.result).toMatchObject({ run: { status: 'failed', error: { code: 'invalid_input' } } });
    expect(leaksIn(left)).toEqual([]);
    await h.close();
  });
});
