import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../src/core/events.js';
import { createEventWriter } from '../../src/ledger/sql/batching-event-writer.js';
import { createDeltaCoalescer } from '../../src/ledger/sql/delta-coalescer.js';
import { createOrderedDeltaCoalescer } from '../../src/ledger/postgres/deltas.js';

/** A token of `runId`'s stream. */
function delta(runId: string, cursor: number, at: number): RuntimeEvent {
  return { type: 'assistant.delta', delta: ' word', sessionKey: runId, seq: cursor, cursor, at, runId };
}

/** What `promise` settled as, once it did. */
function outcomeOf(promise: Promise<unknown>): Promise<'resolved' | 'rejected'> {
  return promise.then(
    () => 'resolved',
    () => 'rejected',
  );
}

describe('createEventWriter', () => {
  it('settles a buffered delta with its own row when a write of other rows fails in its append', async () => {
    const written: RuntimeEvent[] = [];
    const disk = { full: false };
    const writer = createEventWriter({
      deltas: createDeltaCoalescer(),
      writeRows: (events) => {
        if (disk.full) return Promise.reject(new Error('database or disk is full'));
        written.push(...events);
        return Promise.resolve();
      },
      refusal: () => undefined,
    });
    try {
      const first = outcomeOf(writer.append([delta('run_a', 1, 0)]));
      disk.full = true;
      // run_a's row is old enough to be written with this append (and fails); run_b's delta stays buffered.
      const second = outcomeOf(writer.append([delta('run_b', 2, 100)]));
      expect(await first).toBe('rejected');
      disk.full = false;
      await writer.flush();
      // Its row is in the log: its append says so (reported unrecorded, it would never be delivered live).
      expect(written.map((event) => event.cursor)).toEqual([2]);
      expect(await second).toBe('resolved');
    } finally {
      writer.stop();
    }
  });
  it('writes the deltas a run.ended flushes on their own, so a refused run.ended (its close was) takes none with it', async () => {
    const written: number[] = [];
    const writer = createEventWriter({
      // Postgres's coalescer: any other event writes the open buffer first, another run's too.
      deltas: createOrderedDeltaCoalescer(),
      writeRows: (events) => {
        if (events.some((event) => event.type === 'run.ended')) {
          return Promise.reject(new Error('the end of run "run_a" was refused with its close'));
        }
        written.push(...events.map((event) => event.cursor));
        return Promise.resolve();
      },
      refusal: () => undefined,
    });
    try {
      const streaming = outcomeOf(writer.append([delta('run_b', 1, 0)]));
      const ended: RuntimeEvent = {
        type: 'run.ended',
        runId: 'run_a',
        status: 'completed',
        text: '',
        usage: { inputTokens: 0, outputTokens: 0 },
        durationMs: 0,
        sessionKey: 'run_a',
        seq: 2,
        cursor: 2,
        at: 0,
      };
      expect(await outcomeOf(writer.append([ended]))).toBe('rejected');
      expect(await streaming).toBe('resolved');
      expect(written).toEqual([1]);
    } finally {
      writer.stop();
    }
  });
});
