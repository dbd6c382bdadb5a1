import { RuntimeError } from '../../core/index.js';
import type { CompensationRecord, CompensationStore } from '../contract/compensation-store.js';
import type { Perform } from './perform.js';
import { insertSorted, listFor } from './sorted-lists.js';

/**
 * Keep compensations in memory, by run in `seq` order. Records are cloned on the way in and on the way out (their
 * args and results are arbitrary data), and replaced, never mutated, on update.
 */
export function createMemoryCompensations(perform: Perform): CompensationStore {
  const compensationsByRun = new Map<string, CompensationRecord[]>();
  return {
    appendCompensation: (record) =>
      perform(() => {
        insertSorted(
          listFor(compensationsByRun, record.runId),
          structuredClone(record),
          (left, right) => left.seq - right.seq,
          `compensation ("${record.runId}", ${record.seq})`,
        );
      }),

    updateCompensation: (runId, seq, update) =>
      perform(() => {
        const list = compensationsByRun.get(runId) ?? [];
        const index = list.findIndex((record) => record.seq === seq);
        if (index === -1) {
          throw new RuntimeError('not_found', `no compensation ("${runId}", ${seq}) to update`, {
            details: { runId, seq },
          });
        }
        // An attempt replaces the error of the one before (none when it worked).
        const { error: _previous, ...current } = list[index] as CompensationRecord;
        list[index] = {
          ...current,
          status: update.status,
          undoneAt: update.undoneAt,
          ...(update.error === undefined ? {} : { error: { ...update.error } }),
        };
      }),

    listCompensations: (runId) => perform(() => structuredClone(compensationsByRun.get(runId) ?? [])),
  };
}
