import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, isRuntimeError } from 'agentlanes';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { RuntimeError } from '../../src/core/errors.js';
import { invokeTool } from '../../src/tools/invoke-tool.js';

const unhandled: unknown[] = [];
const record = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', record);
});
afterEach(() => {
  process.off('unhandledRejection', record);
});

/** Two macrotask turns: long enough for Node to report a rejection nobody handled. */
const turns = async (): Promise<void> => {
  for (let turn = 0; turn < 2; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
};

const context = { toolCallId: 'call-1', sessionKey: 'web:1', runId: 'run_1' };

describe('invokeTool', () => {
  it('never starts a tool whose signal aborted before it began', async () => {
    const clock = fakeClock({ now: 0 });
    let started = 0;
    const tool = defineTool({
      name: 'work',
      description: 'Work',
      input: z.object({}),
      execute: async (_args, { signal }) => {
        started++;
        await clock.sleep(10, signal);
      },
    });
    const controller = new AbortController();
    controller.abort(new RuntimeError('cancelled', 'interrupted by a new message'));
    const error = await invokeTool(tool, {}, { signal: controller.signal, clock, context }).catch(
      (e: unknown) => e,
    );
    await turns();
    expect(isRuntimeError(error, 'cancelled')).toBe(true);
    expect(started).toBe(0);
    expect(unhandled).toEqual([]);
  });

  it('rejects at the abort and observes the tool rejecting afterwards', async () => {
    const clock = fakeClock({ now: 0 });
    const late = createDeferred<void>();
    const tool = defineTool({
      name: 'stubborn',
      description: 'Ignores its signal, then fails',
      input: z.object({}),
      execute: async () => {
        await late.promise;
        throw new Error('failed after the abort');
      },
    });
    const controller = new AbortController();
    const invoked = invokeTool(tool, {}, { signal: controller.signal, clock, context }).catch(
      (e: unknown) => e,
    );
    controller.abort(new RuntimeError('cancelled', 'user sent /stop'));
    expect(isRuntimeError(await invoked, 'cancelled')).toBe(true);
    late.resolve();
    await turns();
    expect(unhandled).toEqual([]);
  });
});
