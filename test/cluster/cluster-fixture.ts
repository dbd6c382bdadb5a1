import { afterAll, afterEach } from 'vitest';
import { rawQuery } from '../support/postgres.js';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import { startWorker, type CallListener, type ModelCall, type Worker } from './cluster-driver.js';

/** What one test's workers share: their schema, their model calls and their logs. */
export interface ClusterFixture {
  readonly schema: string;
  readonly calls: ModelCall[];
  readonly log: string[];
  /** Start a worker and wait until its runtime exists. */
  start(name: string, options?: { concurrency?: number; leaseMs?: number }): Promise<Worker>;
  /** Resolves once `worker` started (or, with `ended`, ended) a model call whose last user message is `text`. */
  callSeen(worker: string, text: string, ended: boolean): Promise<void>;
  /** One statement on the test's schema. */
  query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
}

const perTest: Worker[] = [];
const perFile: Worker[] = [];
const stop = async (workers: Worker[]): Promise<void> => {
  await Promise.all(
    workers.splice(0).map(async (worker) => {
      worker.signal('SIGCONT');
      // A worker that cannot close in time (a test failed mid-stall) is killed: cleanup must not hang.
      const deadline = setTimeout(() => worker.signal('SIGKILL'), 15_000);
      await Promise.race([worker.close(), worker.exited]);
      clearTimeout(deadline);
    }),
  );
};
afterEach(() => stop(perTest), 30_000);
afterAll(() => stop(perFile), 30_000);

/**
 * A fixture on `schema` (from `freshSchema()`: dropped after the file). Its workers stop after each test, or with
 * `keep` after the file.
 */
export function clusterFixture(schema: string, options: { keep?: boolean } = {}): ClusterFixture {
  const started = options.keep === true ? perFile : perTest;
  const calls: ModelCall[] = [];
  const log: string[] = [];
  const seen = new Set<string>();
  const waiting = new Map<string, Deferred<void>>();
  const keyOf = (worker: string, text: string, ended: boolean): string =>
    JSON.stringify([worker, text, ended]);
  const onCall: CallListener = (call) => {
    const key = keyOf(call.worker, call.text, call.ended);
    seen.add(key);
    waiting.get(key)?.resolve();
  };
  return {
    schema,
    calls,
    log,
    callSeen(worker, text, ended) {
      const key = keyOf(worker, text, ended);
      if (seen.has(key)) return Promise.resolve();
      let deferred = waiting.get(key);
      if (deferred === undefined) waiting.set(key, (deferred = createDeferred<void>()));
      return deferred.promise;
    },
    async start(name, options = {}) {
      const worker = startWorker(schema, name, { calls, log, onCall, ...options });
      started.push(worker);
      await worker.ready;
      return worker;
    },
    query: (text, values = []) => rawQuery(schema, text, values),
  };
}

/** The runs of a session in start order: status and message ids. */
export async function runsOf(
  fixture: ClusterFixture,
  sessionKey: string,
): Promise<{ run_id: string; status: string; message_ids: string[] }[]> {
  const rows = await fixture.query<{ run_id: string; status: string; message_ids: string }>(
    'SELECT run_id, status, message_ids FROM runs WHERE session_key = $1 ORDER BY id',
    [sessionKey],
  );
  return rows.map((row) => ({ ...row, message_ids: JSON.parse(row.message_ids) as string[] }));
}
