import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDeferred } from '../../src/core/deferred.js';
import { RuntimeError } from '../../src/core/errors.js';
import { fakeClock, type FakeClock } from '../../src/core/fake-clock.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { executeTool, type ExecuteToolOptions } from '../../src/tools/execute-tool.js';
import { resolveTool } from '../../src/tools/resolve-tool.js';
import { createToolRegistry } from '../../src/tools/tool-registry.js';

const call = { toolCallId: 'call-1', sessionKey: 'web:1', runId: 'run_1' };

function options(clock: FakeClock, extra: Partial<ExecuteToolOptions> = {}): ExecuteToolOptions {
  return { signal: new AbortController().signal, clock, random: () => 0.5, call, ...extra };
}

/** A tool that records the clock at each attempt and throws `failures` times (with `error`) before it works. */
function flaky(
  clock: FakeClock,
  failures: number,
  error: () => Error,
  retry?: { attempts: number; baseMs: number },
) {
  const startedAt: number[] = [];
  const tool = defineTool({
    name: 'flaky',
    description: 'Fails, then works',
    input: z.object({}),
    ...(retry === undefined ? {} : { retry }),
    execute: () => {
      startedAt.push(clock.now());
      if (startedAt.length <= failures) throw error();
      return 'ok';
    },
  });
  return { tool, startedAt };
}

describe('resolveTool', () => {
  const echo = defineTool({
    name: 'echo',
    description: 'Echo',
    input: z.object({ text: z.string(), times: z.number().default(1) }),
    execute: ({ text }) => text,
  });
  const exec = defineTool({ name: 'exec', description: 'Exec', input: z.object({}), execute: () => 'ran' });
  const tools = createToolRegistry([echo, exec], new Set(['echo']));

  it('refuses a tool the policy denies with tool_denied', () => {
    expect(resolveTool(tools, 'exec', {})).toEqual({
      ok: false,
      error: { code: 'tool_denied', message: 'the tool "exec" is not allowed here' },
    });
  });

  it('refuses an unknown tool with not_found, naming the tools available', () => {
    expect(resolveTool(tools, 'nope', {})).toEqual({
      ok: false,
      error: { code: 'not_found', message: 'unknown tool "nope" (available: echo)' },
    });
  });

  it('refuses arguments that do not match the schema with args_invalid, naming the field', () => {
    const resolved = resolveTool(tools, 'echo', { text: 7 });
    expect(resolved).toMatchObject({ ok: false, error: { code: 'args_invalid' } });
    expect(resolved.ok ? '' : resolved.error.message).toContain('text:');
  });

  it('returns the tool with its parsed arguments when the call is valid', () => {
    expect(resolveTool(tools, 'echo', { text: 'hi' })).toEqual({
      ok: true,
      tool: echo,
      args: { text: 'hi', times: 1 },
    });
  });
});

describe('executeTool', () => {
  it('retries a transient failure with full-jitter backoff on the clock, counting attempts', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 2, () => new Error('upstream 503'));
    const running = executeTool(tool, {}, options(clock, { retry: { attempts: 3, baseMs: 200 } }));
    await clock.advance(1_000);
    // random 0.5: floor(0.5 × 200) = 100 ms, then floor(0.5 × 400) = 200 ms.
    expect(startedAt).toEqual([0, 100, 300]);
    expect(await running).toEqual({ ok: true, output: 'ok', attempts: 3, durationMs: 300 });
  });

  it('uses the tool’s own retry over the caller’s default when the tool defines one', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 5, () => new Error('down'), { attempts: 1, baseMs: 1_000 });
    const running = executeTool(tool, {}, options(clock, { retry: { attempts: 4, baseMs: 10 } }));
    await clock.advance(10_000);
    expect(startedAt).toEqual([0, 500]);
    expect(await running).toEqual({
      ok: false,
      error: { code: 'tool_failed', message: 'down' },
      attempts: 2,
      durationMs: 500,
    });
  });

  it('makes one attempt when neither the tool nor the caller sets a retry', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 1, () => new Error('once'));
    expect(await executeTool(tool, {}, options(clock))).toMatchObject({ ok: false, attempts: 1 });
    expect(startedAt).toEqual([0]);
  });

  it('never retries a permanent failure, keeping its RuntimeError code', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 1, () => new RuntimeError('invalid_input', 'no such order'));
    const outcome = await executeTool(tool, {}, options(clock, { retry: { attempts: 3, baseMs: 10 } }));
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'invalid_input', message: 'no such order' },
      attempts: 1,
      durationMs: 0,
    });
    expect(startedAt).toEqual([0]);
  });

  it('fails an attempt that runs past the timeout with timeout, and retries it', async () => {
    const clock = fakeClock();
    const startedAt: number[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Slow',
      input: z.object({}),
      execute: async (_args, { signal }) => {
        startedAt.push(clock.now());
        await clock.sleep(1_000, signal);
      },
    });
    const running = executeTool(
      slow,
      {},
      options(clock, { timeoutMs: 50, retry: { attempts: 1, baseMs: 100 } }),
    );
    await clock.advance(1_000);
    expect(startedAt).toEqual([0, 100]);
    expect(await running).toMatchObject({
      ok: false,
      error: { code: 'timeout' },
      attempts: 2,
      durationMs: 150,
    });
  });

  it('prefers the tool’s own timeoutMs over the caller’s', async () => {
    const clock = fakeClock();
    const slow = defineTool({
      name: 'slow',
      description: 'Slow',
      input: z.object({}),
      timeoutMs: 20,
      execute: (_args, { signal }) => clock.sleep(1_000, signal),
    });
    const running = executeTool(slow, {}, options(clock, { timeoutMs: 500 }));
    await clock.advance(1_000);
    expect(await running).toMatchObject({ ok: false, error: { code: 'timeout' }, durationMs: 20 });
  });

  it('never starts the tool when the signal aborted before it began', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 0, () => new Error('unused'));
    const controller = new AbortController();
    controller.abort(new RuntimeError('cancelled', 'stop'));
    const outcome = await executeTool(tool, {}, options(clock, { signal: controller.signal }));
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'cancelled', message: 'stop' },
      attempts: 0,
      durationMs: 0,
    });
    expect(startedAt).toEqual([]);
  });

  it('stops a running attempt with the abort reason and does not retry it when the signal aborts', async () => {
    const clock = fakeClock();
    const started = createDeferred<void>();
    let attempts = 0;
    const hanging = defineTool({
      name: 'hanging',
      description: 'Never ends on its own',
      input: z.object({}),
      execute: () => {
        attempts++;
        started.resolve();
        return new Promise(() => undefined);
      },
    });
    const controller = new AbortController();
    const running = executeTool(
      hanging,
      {},
      options(clock, { signal: controller.signal, retry: { attempts: 3, baseMs: 10 } }),
    );
    await started.promise;
    controller.abort(new RuntimeError('cancelled', 'user abort'));
    expect(await running).toMatchObject({
      ok: false,
      error: { code: 'cancelled', message: 'user abort' },
      attempts: 1,
    });
    expect(attempts).toBe(1);
  });

  it('stops waiting for a retry when the signal aborts during the backoff', async () => {
    const clock = fakeClock();
    const { tool, startedAt } = flaky(clock, 5, () => new Error('down'));
    const controller = new AbortController();
    const running = executeTool(
      tool,
      {},
      options(clock, { signal: controller.signal, retry: { attempts: 3, baseMs: 1_000 } }),
    );
    await clock.advance(100);
    controller.abort(new RuntimeError('cancelled', 'user abort'));
    expect(await running).toMatchObject({
      ok: false,
      error: { code: 'cancelled' },
      attempts: 1,
      durationMs: 100,
    });
    await clock.advance(10_000);
    expect(startedAt).toEqual([0]);
  });

  it('fails with tool_failed and no retry when the output does not match the tool’s schema', async () => {
    const clock = fakeClock();
    let calls = 0;
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks up',
      input: z.object({}),
      output: z.object({ status: z.string() }),
      execute: () => {
        calls++;
        return { state: 'what' };
      },
    });
    const outcome = await executeTool(lookup, {}, options(clock, { retry: { attempts: 3, baseMs: 10 } }));
    expect(outcome).toMatchObject({ ok: false, error: { code: 'tool_failed' }, attempts: 1 });
    expect(calls).toBe(1);
  });

  it('maps anything a tool throws that is not a RuntimeError to tool_failed', async () => {
    const clock = fakeClock();
    const { tool: thrower } = flaky(clock, 9, () => new TypeError('boom'));
    expect(await executeTool(thrower, {}, options(clock))).toMatchObject({
      ok: false,
      error: { code: 'tool_failed', message: 'boom' },
    });
  });

  it('runs the undo with the recorded output instead of execute when undoOf is set', async () => {
    const clock = fakeClock();
    const undone: unknown[] = [];
    const reserve = defineTool({
      name: 'reserve',
      description: 'Reserve',
      input: z.object({ item: z.string() }),
      output: z.string(),
      execute: () => 'never called',
      undo: (args, output) => {
        undone.push([args, output]);
        return { not: 'a string' };
      },
    });
    const outcome = await executeTool(
      reserve,
      { item: 'hat' },
      options(clock, { undoOf: { output: 'res-hat' } }),
    );
    expect(outcome).toMatchObject({ ok: true, attempts: 1 });
    expect(undone).toEqual([[{ item: 'hat' }, 'res-hat']]);
  });

  it('fails a deferred tool with tool_failed and an undo of a tool without undo with not_found, without running', async () => {
    const clock = fakeClock();
    const deferred = defineTool({ name: 'ask', description: 'Ask a human', input: z.object({}) });
    expect(await executeTool(deferred, {}, options(clock))).toMatchObject({
      ok: false,
      error: { code: 'tool_failed' },
      attempts: 0,
    });
    expect(await executeTool(deferred, {}, options(clock, { undoOf: { output: null } }))).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
      attempts: 0,
    });
  });
});
