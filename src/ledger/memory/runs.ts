import { RuntimeError } from '../../core/index.js';
import { openRunStatuses } from '../../core/index.js';
import type { Perform } from './perform.js';
import type { SessionState } from '../contract/recovery-store.js';
import {
  pausedRunStatuses,
  type OpenRunStatus,
  type RunClose,
  type RunProgress,
  type RunRecord,
  type RunStore,
} from '../contract/run-store.js';
import type { ToolCallRecord } from '../contract/tool-call-store.js';

/** The run methods of the memory ledger, and what its `loadSession` reads of them. */
export interface MemoryRuns {
  readonly methods: RunStore;
  /** The session's paused run (the latest started if several) with the calls of its latest batch. */
  readonly pausedOf: (sessionKey: string) => SessionState['paused'];
}

const pausedStatuses = new Set<string>(pausedRunStatuses);
/** The statuses of a run that has not ended: `setRunStatus` moves a run between them. */
const openStatuses = new Set<string>(openRunStatuses);

function copyRun(record: RunRecord): RunRecord {
  const copy: RunRecord = { ...record, messageIds: [...record.messageIds], usage: { ...record.usage } };
  return record.error ? { ...copy, error: { ...record.error } } : copy;
}

/** The runs of a memory ledger, indexed by id, by session and by being open. */
interface RunTables {
  readonly runs: Map<string, RunRecord>;
  readonly runsBySession: Map<string, string[]>;
  /** Runs not ended yet (running or paused), in start order: a pause or resume keeps a run's place. */
  readonly openRuns: Set<string>;
}

function addRun(tables: RunTables, record: RunRecord): void {
  if (tables.runs.has(record.runId)) {
    throw new RuntimeError('invalid_input', `run ${record.runId} is already recorded`, {
      details: { runId: record.runId },
    });
  }
  tables.runs.set(record.runId, copyRun(record));
  const ofSession = tables.runsBySession.get(record.sessionKey);
  if (ofSession === undefined) tables.runsBySession.set(record.sessionKey, [record.runId]);
  else ofSession.push(record.runId);
  if (openStatuses.has(record.status)) tables.openRuns.add(record.runId);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function withoutError(record: RunRecord): Omit<RunRecord, 'error'> {
  const { error: _previousError, ...rest } = record;
  return rest;
}

// Closes a paused run as well as a running one (aborting a paused run ends it).
function closeRecord(tables: RunTables, runId: string, close: RunClose): void {
  const current = tables.runs.get(runId);
  if (!current) throw new RuntimeError('not_found', `no run ${runId}`, { details: { runId } });
  // A previous error is dropped; a run without one (the common case) is copied once, not twice.
  const rest = current.error === undefined ? current : withoutError(current);
  const closed: Mutable<RunRecord> = {
    ...rest,
    status: close.status,
    endedAt: close.endedAt,
    text: close.text,
    usage: { ...close.usage },
  };
  if (close.cost !== undefined) closed.cost = close.cost;
  if (close.error) closed.error = { ...close.error };
  tables.runs.set(runId, closed);
  tables.openRuns.delete(runId);
}

function setStatus(tables: RunTables, runId: string, status: OpenRunStatus, progress?: RunProgress): void {
  if (!openStatuses.has(status)) {
    throw new RuntimeError('invalid_input', `"${String(status)}" is not the status of an open run`);
  }
  const current = tables.runs.get(runId);
  if (current === undefined || !tables.openRuns.has(runId)) {
    throw new RuntimeError('not_found', `no open run "${runId}"`, { details: { runId } });
  }
  tables.runs.set(runId, {
    ...current,
    status,
    ...(progress === undefined ? {} : { text: progress.text, usage: { ...progress.usage } }),
    ...(progress?.cost === undefined ? {} : { cost: progress.cost }),
  });
}

/**
 * Keep runs in memory. Records are copied on the way in and replaced, never mutated, afterwards, so records
 * already handed out do not change under their holders. `latestBatch` gives a run's latest paused calls.
 */
export function createMemoryRuns(
  perform: Perform,
  latestBatch: (runId: string) => ToolCallRecord[],
): MemoryRuns {
  const tables: RunTables = { runs: new Map(), runsBySession: new Map(), openRuns: new Set() };
  const { runs, runsBySession, openRuns } = tables;

  const openRunsWith = (accept: (status: string) => boolean): RunRecord[] =>
    [...openRuns].map((runId) => runs.get(runId) as RunRecord).filter((record) => accept(record.status));

  const methods: RunStore = {
    openRun: (record) => perform(() => addRun(tables, record)),
    closeRun: (runId, close) => perform(() => closeRecord(tables, runId, close)),
    getRun: (runId) => perform(() => runs.get(runId)),
    listRuns: (sessionKey) =>
      perform(() => (runsBySession.get(sessionKey) ?? []).map((runId) => runs.get(runId) as RunRecord)),
    listOpenRuns: () => perform(() => openRunsWith((status) => status === 'running')),
    listPausedRuns: () => perform(() => openRunsWith((status) => pausedStatuses.has(status))),
    setRunStatus: (runId, status, progress) => perform(() => setStatus(tables, runId, status, progress)),
  };

  return {
    methods,
    pausedOf: (sessionKey) => {
      const runIds = runsBySession.get(sessionKey) ?? [];
      for (let index = runIds.length - 1; index >= 0; index--) {
        const record = runs.get(runIds[index] as string) as RunRecord;
        if (pausedStatuses.has(record.status)) return { run: record, calls: latestBatch(record.runId) };
      }
      return undefined;
    },
  };
}
