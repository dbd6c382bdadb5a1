import { describe, expect, it } from 'vitest';
import { createRuntime } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { runReplayCommand } from '../../src/cli/replay-command.js';
import { createMemoryLedger } from '../../src/ledger/memory/ledger.js';
import { captureOutput } from './captured-output.js';

describe('replay of a forked session', () => {
  it('prints where the session was forked from and the turns it inherited before its own events', async () => {
    const ledger = createMemoryLedger();
    const clock = fakeClock({ now: 0 });
    const model = scriptedModel([{ text: 'hello' }, { text: 'sure' }], { clock });
    const runtime = createRuntime({
      ledger,
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      clock,
      ids: sequentialIds(),
    });
    await runtime.session('chat:p').send({ id: 'a', text: 'hi' });
    await runtime.session('chat:p').waitForEnd({ timeoutMs: 1000 });
    await runtime.fork('chat:p', 'chat:c');
    const empty = captureOutput();
    expect(await runReplayCommand(ledger, 'chat:c', { output: empty })).toBe(0);
    expect(empty.lines()).toEqual([
      '  forked from chat:p after run_1  2 turns inherited',
      '  inherited  chat:p  run_1  user       "hi"',
      '  inherited  chat:p  run_1  assistant  "hello"',
    ]);
    await runtime.session('chat:c').send({ id: 'b', text: 'more' });
    await runtime.session('chat:c').waitForEnd({ timeoutMs: 1000 });
    await runtime.close();
    const output = captureOutput();
    expect(await runReplayCommand(ledger, 'chat:c', { output })).toBe(0);
    expect(output.lines().slice(0, 4)).toEqual([
      ...empty.lines(),
      '  +0.000s  message received   b  collect -> started  "more"',
    ]);
    expect(output.lines().at(-1)).toMatch(/run ended\s+run_2\s+completed/);
  });

  it("indents a subagent's timeline under the call that spawned it", async () => {
    const ledger = createMemoryLedger();
    const clock = fakeClock({ now: 0 });
    const model = scriptedModel(
      (request) =>
        request.messages[0]?.content === 'look it up'
          ? { text: 'found it' }
          : request.messages.some((message) => message.role === 'tool')
            ? { text: 'all done' }
            : { toolCalls: [{ id: 'c1', name: 'spawn_subagent', args: { task: 'look it up' } }] },
      { clock },
    );
    const runtime = createRuntime({
      ledger,
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      subagents: { enabled: true },
      clock,
      ids: sequentialIds(),
    });
    await runtime.session('chat:p').send({ id: 'a', text: 'go' });
    await runtime.session('chat:p').waitForEnd({ timeoutMs: 1000 });
    await runtime.close();
    const output = captureOutput();
    expect(await runReplayCommand(ledger, 'chat:p', { output })).toBe(0);
    const lines = output.lines();
    const spawned = lines.findIndex((line) => line.includes('subagent spawned'));
    expect(lines[spawned]).toMatch(/^ {2}\+\S+ +subagent spawned +run_1 +chat:p\/sub:\S+ +"look it up" +c1$/);
    const child = lines.slice(spawned + 1).filter((line) => line.startsWith('      '));
    expect(child[0]).toMatch(/message received +c1 +collect -> started +"look it up"/);
    expect(child.at(-1)).toMatch(/run ended +run_\d+ +completed/);
    const ended = lines.findIndex((line) => line.includes('subagent ended'));
    expect(ended).toBeGreaterThan(spawned + child.length);
    expect(lines.at(-1)).toMatch(/^ {2}\+\S+ +run ended +run_1 +completed/);
  });
});
