import { RuntimeError } from '../../core/index.js';
import type { Perform } from './perform.js';
import { insertSorted, listFor } from './sorted-lists.js';
import {
  rememberOf,
  type ToolCallKey,
  type ToolCallRecord,
  type ToolCallStore,
  type ToolCallUpdate,
} from '../contract/tool-call-store.js';

/** The tool-call methods of the memory ledger, and what its `loadSession` reads of them. */
export interface MemoryToolCalls {
  readonly methods: ToolCallStore;
  /** The calls of a run's latest recorded turn, by position (synchronous: `loadSession` runs it inside its work). */
  readonly latestBatch: (runId: string) => ToolCallRecord[];
}

/** Order calls by turn, then position. */
const compareCalls = (left: ToolCallKey, right: ToolCallKey): number =>
  left.turn - right.turn || left.position - right.position;

const keyText = (key: ToolCallKey): string => `("${key.runId}", ${key.turn}, ${key.position})`;

/** The calls of a memory ledger, by run, and the runs with calls of each session. */
interface CallTables {
  readonly callsByRun: Map<string, ToolCallRecord[]>;
  readonly runsBySession: Map<string, Set<string>>;
}

function findCall(
  tables: CallTables,
  key: ToolCallKey,
): { list: ToolCallRecord[]; index: number } | undefined {
  const list = tables.callsByRun.get(key.runId) ?? [];
  const index = list.findIndex((record) => compareCalls(record, key) === 0);
  return index === -1 ? undefined : { list, index };
}

function remembered(records: Iterable<ToolCallRecord>, memory: 'run' | 'session'): string[] {
  const tools = new Set<string>();
  for (const record of records) if (rememberOf(record.decision) === memory) tools.add(record.tool);
  return [...tools].sort();
}

function putCalls(tables: CallTables, records: readonly ToolCallRecord[]): void {
  // Check the whole batch first (against the store and itself) so a refused batch writes nothing.
  const seen = new Set<string>();
  for (const record of records) {
    const text = keyText(record);
    if (seen.has(text) || findCall(tables, record) !== undefined) {
      throw new RuntimeError('invalid_input', `tool call ${text} is already recorded`, {
        details: { runId: record.runId, turn: record.turn, position: record.position },
      });
    }
    seen.add(text);
  }
  for (const record of records) {
    insertSorted(
      listFor(tables.callsByRun, record.runId),
      structuredClone(record),
      compareCalls,
      'tool call',
    );
    let runs = tables.runsBySession.get(record.sessionKey);
    if (runs === undefined) tables.runsBySession.set(record.sessionKey, (runs = new Set()));
    runs.add(record.runId);
  }
}

function updateCall(tables: CallTables, key: ToolCallKey, update: ToolCallUpdate): void {
  const found = findCall(tables, key);
  if (found === undefined) {
    throw new RuntimeError('not_found', `no tool call ${keyText(key)} to update`, { details: { ...key } });
  }
  const { list, index } = found;
  list[index] = {
    ...(list[index] as ToolCallRecord),
    status: update.status,
    ...(update.decision === undefined ? {} : { decision: structuredClone(update.decision) }),
    ...(update.result === undefined ? {} : { result: { ...update.result } }),
    ...(update.resolvedAt === undefined ? {} : { resolvedAt: update.resolvedAt }),
    ...(update.kind === undefined ? {} : { kind: update.kind }),
    ...(update.requestedAt === undefined ? {} : { requestedAt: update.requestedAt }),
  };
}

/**
 * Keep the calls of paused batches in memory. Records are cloned on the way in and on the
 * way out (their args and results are arbitrary data), and replaced, never mutated, on update.
 */
export function createMemoryToolCalls(perform: Perform): MemoryToolCalls {
  const tables: CallTables = { callsByRun: new Map(), runsBySession: new Map() };
  const { callsByRun, runsBySession } = tables;

  const methods: ToolCallStore = {
    putToolCalls: (records) => perform(() => putCalls(tables, records)),
    updateToolCall: (key, update) => perform(() => updateCall(tables, key, update)),
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
