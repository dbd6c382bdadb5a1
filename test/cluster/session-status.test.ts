import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from 'agentlanes';
import { createServer, type ListeningServer } from 'agentlanes/server';
import { scriptedModel, type ScriptedRequest, type ScriptEntry } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { freshSchema, postgresUrl, rawQuery } from '../support/postgres.js';

const token = 'admin-token-0123456789';
const running: Runtime[] = [];
const servers: ListeningServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const runtime of running.splice(0)) await runtime.close({ timeoutMs: 5_000 });
});

/** The text of the request's last user message. */
function lastText(request: ScriptedRequest): string {
  const last = request.messages.findLast((message) => message.role === 'user');
  return last?.role === 'user' ? last.content : '';
}

/** A cluster worker in this process on `schema`: `hang` never answers (it resolves `hung` first). */
function worker(schema: string, hung?: () => void): Runtime {
  const script = (request: ScriptedRequest): ScriptEntry => {
    if (lastText(request) !== 'hang') return { text: 'ok' };
    hung?.();
    return { hang: true };
  };
  const runtime = createRuntime({
    ledger: { postgres: { connectionString: postgresUrl, schema } },
    // Long leases: a worker starved of CPU on a loaded machine keeps its sessions.
    cluster: { leaseMs: 10_000, pollMs: 100, scanMs: 250 },
    providers: { scripted: scriptedModel(script) },
    model: { provider: 'scripted', model: 'm' },
  });
  running.push(runtime);
  return runtime;
}

/** Serve `runtime` over loopback HTTP: `get(path)` reads a route with the admin token. */
async function serve(runtime: Runtime): Promise<(path: string) => Promise<unknown>> {
  const { listen } = createServer(runtime, { auth: { tokens: [{ token }] }, dashboard: false });
  const server = await listen({ port: 0 });
  servers.push(server);
  return async (path) => {
    const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return response.json();
  };
}

describe('GET /v1/sessions/:key on a cluster worker', { timeout: 60_000 }, () => {
  it('answers the state, run and queue of a session another worker runs, when asked on a non-owner', async () => {
    const schema = freshSchema();
    const hung = createDeferred<void>();
    const a = worker(schema, () => hung.resolve());
    const b = worker(schema);
    const get = await serve(b);
    const chat = a.session('web:busy');
    expect(await chat.send({ id: 'm1', text: 'hang' })).toMatchObject({ disposition: 'started' });
    await hung.promise;
    expect(await chat.send({ id: 'm2', text: 'next' }, { mode: 'followup' })).toMatchObject({
      disposition: 'queued',
    });
    const truth = chat.status();
    expect(truth).toMatchObject({ queued: 1, runId: expect.any(String) as string });
    expect(['running', 'streaming']).toContain(truth.state);

    // B holds nothing: its synchronous status() still answers idle, the route and readStatus() ask A.
    expect(b.session('web:busy').status()).toEqual({ state: 'idle', queued: 0 });
    expect(await get('/v1/sessions/web:busy')).toEqual({ key: 'web:busy', ...truth });
    expect(await b.session('web:busy').readStatus()).toEqual(truth);
    expect(await get('/v1/sessions/web:busy/queue')).toEqual({
      queue: [expect.objectContaining({ messageId: 'm2', text: 'next', mode: 'followup' })],
    });
    // A page of sessions asks each holder too: A's busy session, and B's own idle one answered by B.
    expect(await b.session('web:quiet').send({ id: 'q1', text: 'hello' })).toMatchObject({
      disposition: 'started',
    });
    expect(await b.session('web:quiet').waitForEnd({ timeoutMs: 10_000 })).toMatchObject({ status: 'ended' });
    const page = (await get('/v1/sessions')) as { sessions: { key: string }[] };
    expect(page.sessions.map(({ key, ...status }) => ({ key, ...status, updatedAt: undefined }))).toEqual([
      { key: 'web:busy', ...truth, updatedAt: undefined },
      { key: 'web:quiet', state: 'idle', queued: 0, runId: undefined, updatedAt: undefined },
    ]);
    expect(await b.session('web:busy').abort({ reason: 'done' })).toBe(true);
  });

  it('answers idle for a session no worker holds, without claiming it', async () => {
    const schema = freshSchema();
    const b = worker(schema);
    const get = await serve(b);
    expect(await get('/v1/sessions/web:nobody')).toEqual({ key: 'web:nobody', state: 'idle', queued: 0 });
    expect(await get('/v1/sessions/web:nobody/queue')).toEqual({ queue: [] });
    const owners = await rawQuery(schema, 'SELECT session_key FROM cluster_owners WHERE session_key = $1', [
      'web:nobody',
    ]);
    expect(owners).toEqual([]);
  });
});
