import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type Runtime } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

const running: Runtime[] = [];
afterEach(async () => {
  for (const runtime of running.splice(0)) await runtime.close({ timeoutMs: 5_000 });
});

/** One execution of the `where` tool: the worker that ran it, the step, and how it ended. */
interface Execution {
  readonly worker: string;
  readonly step: string;
  readonly aborted: Deferred<string>;
}

/**
 * What the test's workers share: every execution of `where`, and a gate the running executions wait on (each
 * `where` holds until `release` resolves, or until its signal aborts).
 */
function createLog() {
  const executions: Execution[] = [];
  const changed = new Set<() => void>();
  const release = createDeferred<void>();
  return {
    executions,
    /** Let every held execution finish (and those that start later). */
    release: () => release.resolve(),
    /** Resolves once `check` holds for the executions seen so far. */
    until(check: (seen: readonly Execution[]) => boolean): Promise<void> {
      if (check(executions)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const listener = (): void => {
          if (!check(executions)) return;
          changed.delete(listener);
          resolve();
        };
        changed.add(listener);
      });
    },
    /** The tool as `worker` configures it: it records the worker that ran it, then waits for the gate. */
    tool(worker: string) {
      return defineTool({
        name: 'where',
        description: 'Report which worker ran the step',
        input: z.object({ label: z.string() }),
        execute: async ({ label }, { signal, toolCallId }) => {
          const execution: Execution = { worker, step: toolCallId, aborted: createDeferred<string>() };
          executions.push(execution);
          for (const listener of [...changed]) listener();
          const gate = release.promise;
          await new Promise<void>((resolve, reject) => {
            const onAbort = (): void => {
              execution.aborted.resolve(String((signal.reason as Error | undefined)?.message));
              reject(signal.reason as Error);
            };
            if (signal.aborted) onAbort();
            signal.addEventListener('abort', onAbort, { once: true });
            void gate.then(resolve);
          });
          return { worker, label };
        },
      });
    },
  };
}

type Log = ReturnType<typeof createLog>;

/** A cluster worker in this process named `name`, on `schema`, whose `where` records into `log`. */
function worker(
  schema: string,
  name: string,
  log: Log,
  cluster: { jobConcurrency?: number; planSteps?: 'jobs' | 'inline' } = {},
  onError?: (error: unknown) => void,
): Runtime {
  const runtime = createRuntime({
    ...(onError === undefined ? {} : { onError }),
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    cluster: { leaseMs: 2_000, pollMs: 100, scanMs: 250, ...cluster },
    providers: { scripted: scriptedModel([]) },
    model: { provider: 'scripted', model: 'm' },
    tools: [log.tool(name)],
  });
  running.push(runtime);
  return runtime;
}

/** A plan of `count` independent `where` steps: s1, s2, … */
function parallelPlan(count: number) {
  return {
    steps: Array.from({ length: count }, (_, index) => ({
      id: `s${index + 1}`,
      tool: 'where',
      args: { label: `step ${index + 1}` },
    })),
  };
}

const distinctWorkers = (seen: readonly Execution[]): number => new Set(seen.map((each) => each.worker)).size;

async function jobRows(schema: string): Promise<number> {
  const rows = await rawQuery<{ count: number }>(schema, 'SELECT count(*)::int AS count FROM cluster_jobs');
  return rows[0]?.count ?? -1;
}

/** Poll the database until `cluster_jobs` is empty (the executors delete cancelled rows once their tool stopped). */
async function jobsDrained(schema: string): Promise<number> {
  for (let round = 0; round < 200; round++) {
    const count = await jobRows(schema);
    if (count === 0) return 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return jobRows(schema);
}

describe('plan steps as cluster jobs', { timeout: 60_000 }, () => {
  it('run on several workers of the cluster, the owner included', async () => {
    const schema = freshSchema();
    const log = createLog();
    const owner = worker(schema, 'a', log, { jobConcurrency: 1 });
    worker(schema, 'b', log, { jobConcurrency: 1 });
    worker(schema, 'c', log, { jobConcurrency: 1 });
    const done = owner.session('chat').executePlan(parallelPlan(3));
    // Each worker takes one job at most: all three steps only run at once when each worker runs one.
    await log.until((seen) => distinctWorkers(seen) === 3);
    log.release();
    const result = await done;
    expect(result.status).toBe('completed');
    expect(result.results.map((step) => [step.stepId, step.success])).toEqual([
      ['s1', true],
      ['s2', true],
      ['s3', true],
    ]);
    const ranOn = result.results.map((step) => (step.data as { worker: string }).worker);
    expect(new Set(ranOn)).toEqual(new Set(['a', 'b', 'c']));
    expect(result.results.map((step) => (step.data as { label: string }).label)).toEqual([
      'step 1',
      'step 2',
      'step 3',
    ]);
    expect(log.executions).toHaveLength(3);
    expect(await jobRows(schema)).toBe(0);
  });

  it('abort the step running on another worker when the plan is aborted', async () => {
    const schema = freshSchema();
    const log = createLog();
    const owner = worker(schema, 'a', log, { jobConcurrency: 1 });
    worker(schema, 'b', log, { jobConcurrency: 1 });
    const chat = owner.session('chat');
    const done = chat.executePlan(parallelPlan(2));
    await log.until((seen) => distinctWorkers(seen) === 2);
    const remote = log.executions.find((execution) => execution.worker === 'b');
    expect(await chat.abort({ reason: 'user sent /stop' })).toBe(true);
    const result = await done;
    expect(result.status).toBe('aborted');
    expect(result.results.every((step) => step.error?.code === 'cancelled')).toBe(true);
    // The abort reached the tool on worker b through its job row and doorbell.
    expect(await remote?.aborted.promise).toBe('the plan step was withdrawn');
    const runs = await rawQuery(schema, 'SELECT status FROM runs WHERE run_id = $1', [result.runId]);
    expect(runs).toEqual([{ status: 'aborted' }]);
    expect(await jobsDrained(schema)).toBe(0);
    expect(log.executions).toHaveLength(2);
  });

  it('run on the owner with planSteps inline', async () => {
    const schema = freshSchema();
    const log = createLog();
    // With jobs, an owner taking one job at a time could not run the three steps at once by itself.
    const owner = worker(schema, 'a', log, { jobConcurrency: 1, planSteps: 'inline' });
    worker(schema, 'b', log);
    worker(schema, 'c', log);
    const done = owner.session('chat').executePlan(parallelPlan(3));
    await log.until((seen) => seen.length === 3);
    log.release();
    const result = await done;
    expect(result.status).toBe('completed');
    expect(result.results.map((step) => (step.data as { worker: string }).worker)).toEqual(['a', 'a', 'a']);
    expect(log.executions.map((execution) => execution.worker)).toEqual(['a', 'a', 'a']);
    expect(await jobRows(schema)).toBe(0);
  });

  it('fail a step whose executor left the cluster, without running it again', async () => {
    const schema = freshSchema();
    const log = createLog();
    const owner = worker(schema, 'a', log, { jobConcurrency: 1 });
    worker(schema, 'b', log, { jobConcurrency: 1 });
    const done = owner.session('chat').executePlan(parallelPlan(2), { retries: 3 });
    await log.until((seen) => distinctWorkers(seen) === 2);
    const remote = log.executions.find((execution) => execution.worker === 'b') as Execution;
    const [row] = await rawQuery<{ worker_id: string }>(
      schema,
      'SELECT worker_id FROM cluster_jobs WHERE tool_call_id = $1',
      [remote.step],
    );
    // Worker b's lease runs out while its step hangs: to the cluster, b is dead.
    await rawQuery(schema, 'UPDATE cluster_workers SET lease_until = 0 WHERE worker_id = $1', [
      row?.worker_id,
    ]);
    // The owner gives up on the step (its row goes, so b's poll aborts the tool there).
    expect(await remote.aborted.promise).toBe('the plan step was withdrawn');
    log.release();
    const result = await done;
    expect(result.status).toBe('failed');
    const failed = result.results.find((step) => step.stepId === remote.step);
    expect(failed).toMatchObject({
      success: false,
      error: {
        code: 'tool_failed',
        message: `the worker running step ${remote.step} stopped before it answered`,
      },
    });
    expect(result.results.find((step) => step.stepId !== remote.step)).toMatchObject({ success: true });
    // At most once: no worker took the step again, and nothing is left to take.
    expect(log.executions.filter((execution) => execution.step === remote.step)).toHaveLength(1);
    expect(await jobsDrained(schema)).toBe(0);
  });

  it('run inline on the owner when the job cannot be queued', async () => {
    const schema = freshSchema();
    const log = createLog();
    const failures: string[] = [];
    const report = (error: unknown): void => void failures.push(String((error as Error).message));
    // With jobs, an owner taking one job at a time could not run both steps at once by itself.
    const owner = worker(schema, 'a', log, { jobConcurrency: 1 }, report);
    worker(schema, 'b', log, {}, report);
    const chat = owner.session('chat');
    // Wait until the cluster migrated (the owner answers for its session), then take the job table away.
    await chat.waitForEnd({ timeoutMs: 10_000 });
    await rawQuery(schema, 'ALTER TABLE cluster_jobs RENAME TO cluster_jobs_away');
    try {
      const done = chat.executePlan(parallelPlan(2));
      await log.until((seen) => seen.length === 2);
      log.release();
      const result = await done;
      expect(result.status).toBe('completed');
      expect(result.results.map((step) => (step.data as { worker: string }).worker)).toEqual(['a', 'a']);
      expect(failures.some((message) => message.includes('cluster_jobs'))).toBe(true);
    } finally {
      await rawQuery(schema, 'ALTER TABLE cluster_jobs_away RENAME TO cluster_jobs');
    }
  });
});
