import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type Runtime } from 'agentlanes';
import { createServer, type ListeningServer } from 'agentlanes/server';
import { scriptedModel } from 'agentlanes/testing';
import { freshSchema, postgresUrl } from '../support/postgres.js';

const token = 'admin-token-0123456789';
const running: Runtime[] = [];
const servers: ListeningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const runtime of running.splice(0)) await runtime.close({ timeoutMs: 5_000 });
});

/** A cluster worker in this process on `schema` whose high-risk `pay` records into `log` as `name`. */
function worker(schema: string, name: string, log: string[]): Runtime {
  const pay = defineTool({
    name: 'pay',
    description: 'Pay someone',
    risk: 'high',
    input: z.object({ to: z.string() }),
    execute: ({ to }) => {
      log.push(`${name} paid ${to}`);
      return Promise.resolve({ paid: to });
    },
  });
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    // Long leases: a worker starved of CPU on a loaded machine keeps its sessions. Steps run inline, on the owner.
    cluster: { leaseMs: 10_000, pollMs: 100, scanMs: 250, planSteps: 'inline' },
    providers: { scripted: scriptedModel([]) },
    model: { provider: 'scripted', model: 'm' },
    tools: [pay],
  });
  running.push(runtime);
  return runtime;
}

/** Serve `runtime` over loopback HTTP: `call(method, path, json?)` with the admin token. */
async function serve(runtime: Runtime) {
  const { listen } = createServer(runtime, { auth: { tokens: [{ token }] }, dashboard: false });
  const server = await listen({ port: 0 });
  servers.push(server);
  return (method: string, path: string, json?: unknown): Promise<Response> =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
}

describe('paused plan steps on a cluster worker', { timeout: 60_000 }, () => {
  it('lists a step paused on one worker in another worker’s GET /v1/approvals and approves it there', async () => {
    const schema = freshSchema();
    const log: string[] = [];
    const a = worker(schema, 'a', log);
    const b = worker(schema, 'b', log);
    const call = await serve(b);
    const plan = { steps: [{ id: 's1', tool: 'pay', args: { to: 'bob' } }] };
    const paused = await a.session('web:plan').executePlan(plan);
    expect(paused).toMatchObject({ status: 'awaiting_approval', awaiting: ['s1'] });

    const listed = (await (await call('GET', '/v1/approvals')).json()) as { pending: unknown[] };
    expect(listed.pending).toEqual([
      expect.objectContaining({
        sessionKey: 'web:plan',
        runId: paused.runId,
        toolCallId: 's1',
        planStep: true,
      }),
    ]);
    const status: unknown = await (await call('GET', '/v1/sessions/web:plan')).json();
    expect(status).toEqual({ key: 'web:plan', state: 'awaiting_approval', runId: paused.runId, queued: 0 });

    const approved = await call('POST', '/v1/sessions/web:plan/approvals/s1', { decision: 'approve' });
    expect(approved.status).toBe(204);
    // The step ran on the worker that holds the session.
    expect(log).toEqual(['a paid bob']);
    expect((await a.session('web:plan').runs()).map((run) => run.status)).toEqual(['completed']);
    expect(await (await call('GET', '/v1/approvals')).json()).toEqual({ pending: [] });
  });
});
