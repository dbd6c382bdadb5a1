import { RuntimeError } from '../core/errors.js';
import {
  rememberOf,
  type CompensationRecord,
  type ToolCallKey,
  type ToolCallMethods,
  type ToolCallRecord,
} from './tool-call-records.js';

/** The memory ledger's way to run synchronous work and report through a promise (rejects once closed). */
export type Perform = <T>(work: () => T) => Promise<T>;

/** The tool-call methods of the memory ledger, and what its `loadSession` reads of them. */
export interface MemoryToolCalls {
  readonly methods: ToolCallMethods;
  /** The calls of a run's latest recorded turn, by position (synchronous: `loadSession` runs it inside its work). */
  readonly latestBatch: (runId: string) => ToolCallRecord[];
}

/** Order calls by turn, then position. */
const compareCalls = (left: ToolCallKey, right: ToolCallKey): number =>
  left.turn - right.turn || left.position - right.position;

const keyText = (key: ToolCallKey): string => `("${key.runId}", ${key.turn}, ${key.position})`;

/** Insert `record` into `list`, kept sorted by `compare`; one equal to a record already there is refused. */
function insertSorted<T>(list: T[], record: T, compare: (left: T, right: T) => number, what: string): void {
  let index = list.length;
  while (index > 0 && compare(list[index - 1] as T, record) > 0) index--;
  if (index > 0 && compare(list[index - 1] as T, record) === 0) {
    throw new RuntimeError('invalid_input', `${what} is already recorded`);
  }
  list.splice(index, 0, record);
}

function listFor<T>(map: Map<string, T[]>, key: string): T[] {
  let list = map.get(key);
  if (list === undefined) {
    list = [];
    map.set(key, list);
  }
  return list;
}

/**
 * Keep the calls of paused batches and the compensations in memory. Records are cloned on the way in and on the
 * way out (their args and results are arbitrary data), and replaced, never mutated, on update.
 */
export function createMemoryToolCalls(perform: Perform): MemoryToolCalls {
  const callsByRun = new Map<string, ToolCallRecord[]>();
  const runsBySession = new Map<string, Set<string>>();
  const compensationsByRun = new Map<string, CompensationRecord[]>();

  const findCall = (key: ToolCallKey): { list: ToolCallRecord[]; index: number } | undefined => {
    const list = callsByRun.get(key.runId) ?? [];
    const index = list.findIndex((record) => compareCalls(record, key) === 0);
    return index === -1 ? undefined : { list, index };
  };

  const remembered = (records: Iterable<ToolCallRecord>, memory: 'run' | 'session'): string[] => {
    const tools = new Set<string>();
    for (const record of records) if (rememberOf(record.decision) === memory) tools.add(record.tool);
    return [...tools].sort();
  };

  const methods: ToolCallMethods = {
    putToolCalls: (records) =>
      perform(() => {
        // Check the whole batch first (against the store and itself) so a refused batch writes nothing.
        const seen = new Set<string>();
        for (const record of records) {
          const text = keyText(record);
          if (seen.has(text) || findCall(record) !== undefined) {
            throw new RuntimeError('invalid_input', `tool call ${text} is already recorded`, {
              details: { runId: record.runId, turn: record.turn, position: record.position },
            });
          }
          seen.add(text);
        }
        for (const record of records) {
          insertSorted(listFor(callsByRun, record.runId), structuredClone(record), compareCalls, 'tool call');
          let runs = runsBySession.get(record.sessionKey);
          if (runs === undefined) runsBySession.set(record.sessionKey, (runs = new Set()));
          runs.add(record.runId);
        }
      }),

    updateToolCall: (key, update) =>
      perform(() => {
        const found = findCall(key);
        if (found === undefined) {
          throw new RuntimeError('not_found', `no tool call ${keyText(key)} to update`, {
            details: { ...key },
          });
        }
        const { list, index } = found;
        list[index] = {
          ...(list[index] as ToolCallRecord),
          status: update.status,
          ...(update.decision === undefined ? {} : { decision: structuredClone(update.decision) }),
          ...(update.result === undefined ? {} : { result: { ...update.result } }),
          ...(update.resolvedAt === undefined ? {} : { resolvedAt: update.resolvedAt }),
        };
      }),

    listToolCalls: (runId) => perform(() => structuredClone(callsByRun.get(runId) ?? [])),

    rememberedTools: (sessionKey, runId) =>
      perform(() => {
        const runIds = [...(runsBySession.get(sessionKey) ?? [])];
        const inSession = runIds.flatMap((id) => callsByRun.get(id) ?? []);
        return {
          run: remembered(callsByRun.get(runId) ?? [], 'run'),
          session: remembered(inSession, 'session'),
        };
      }),

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

  return {
    methods,
    latestBatch: (runId) => {
      const calls = callsByRun.get(runId) ?? [];
      const latest = calls.at(-1)?.turn;
      return structuredClone(calls.filter((record) => record.turn === latest));
    },
  };
}
