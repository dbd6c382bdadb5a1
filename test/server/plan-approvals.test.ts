import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type RuntimeEvent } from 'agentlanes';
import { adminToken, startServer, webToken, type ServerHarness } from './server-harness.js';

/** A `web:` token that may approve. */
const approverToken = 'web-approver-0123456789';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A harness whose `pay` tool (high risk) and `note` tool record each execution. */
async function startWithPlanTools(): Promise<{ harness: ServerHarness; log: string[] }> {
  const log: string[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pay someone',
    risk: 'high',
    input: z.object({ to: z.string() }),
    execute: ({ to }) => {
      log.push(`pay ${to}`);
      return Promise.resolve({ paid: to });
    },
  });
  const note = defineTool({
    name: 'note',
    description: 'Write a note',
    input: z.object({ text: z.string() }),
    execute: ({ text }) => {
      log.push(`note ${text}`);
      return Promise.resolve({ noted: text });
    },
  });
  const started = await startServer(
    [{ text: 'hello back' }],
    { tools: [pay, note] },
    {
      auth: {
        tokens: [
          { token: adminToken },
          { token: webToken, sessionKeyPrefixes: ['web:'] },
          { token: approverToken, sessionKeyPrefixes: ['web:'], can: ['send', 'read', 'approve'] },
        ],
      },
    },
  );
  return { harness: started, log };
}

const payPlan = {
  plan: {
    steps: [
      { id: 's1', tool: 'pay', args: { to: 'bob' } },
      { id: 's2', tool: 'note', args: { text: 'paid' }, dependsOn: ['s1'] },
    ],
  },
};

/** Post the plan to `web:1` and check it paused at s1: its run id. */
async function pausedPlan(started: ServerHarness): Promise<string> {
  const response = await started.request('/v1/sessions/web:1/plans', { method: 'POST', json: payPlan });
  const body = (await response.json()) as { runId: string; status: string; awaiting?: string[] };
  expect(body).toMatchObject({ status: 'awaiting_approval', awaiting: ['s1'] });
  return body.runId;
}

/** The first event `matches` accepts, from the runtime's live stream. */
async function nextEvent(
  started: ServerHarness,
  matches: (event: RuntimeEvent) => boolean,
): Promise<RuntimeEvent> {
  const controller = new AbortController();
  for await (const event of started.runtime.events({ signal: controller.signal })) {
    if (matches(event)) {
      controller.abort();
      return event;
    }
  }
  throw new Error('the event stream ended');
}

/** The runs of `web:1` as the runs route lists them. */
async function runsOf(started: ServerHarness): Promise<{ runId: string; status: string }[]> {
  const response = await started.request('/v1/sessions/web:1/runs');
  return ((await response.json()) as { runs: { runId: string; status: string }[] }).runs;
}

describe('createServer: paused plan steps', () => {
  it('lists a paused plan step in GET /v1/approvals and runs the plan on when approved there', async () => {
    const started = await startWithPlanTools();
    harness = started.harness;
    const runId = await pausedPlan(harness);
    const listed = await harness.request('/v1/approvals', { token: approverToken });
    expect(await listed.json()).toEqual({
      pending: [
        {
          sessionKey: 'web:1',
          runId,
          toolCallId: 's1',
          approvalId: 's1',
          tool: 'pay',
          args: { to: 'bob' },
          kind: 'approval',
          requestedAt: expect.any(Number) as number,
          planStep: true,
        },
      ],
    });
    expect(started.log).toEqual([]);

    const approved = await harness.request('/v1/sessions/web:1/approvals/s1', {
      method: 'POST',
      token: approverToken,
      json: { decision: 'approve' },
    });
    expect(approved.status).toBe(204);
    expect(started.log).toEqual(['pay bob', 'note paid']);
    expect(await runsOf(harness)).toMatchObject([{ runId, status: 'completed' }]);
    expect(await (await harness.request('/v1/approvals')).json()).toEqual({ pending: [] });
  });

  it('fails a rejected step and lets the session take its next message when rejected over HTTP', async () => {
    const started = await startWithPlanTools();
    harness = started.harness;
    const runId = await pausedPlan(harness);
    const queued = await harness.request('/v1/sessions/web:1/messages', {
      method: 'POST',
      json: { text: 'hi', mode: 'followup', debounceMs: 0 },
    });
    expect(queued.status).toBe(202);
    expect((await runsOf(harness)).map((run) => run.runId)).toEqual([runId]);
    const answered = nextEvent(harness, (event) => event.type === 'run.ended' && event.runId !== runId);

    const rejected = await harness.request(`/v1/sessions/web:1/plans/${runId}/approvals`, {
      method: 'POST',
      token: approverToken,
      json: { reject: ['s1'] },
    });
    expect(rejected.status).toBe(200);
    const result = (await rejected.json()) as { status: string; results: unknown[] };
    expect(result.results).toEqual([
      expect.objectContaining({
        stepId: 's1',
        success: false,
        error: expect.objectContaining({ code: 'cancelled', message: 'rejected by the operator' }) as unknown,
      }),
      expect.objectContaining({ stepId: 's2', success: false }),
    ]);
    expect(started.log).toEqual([]);
    await harness.clock.runAll();
    const ended = await answered;
    expect(ended).toMatchObject({ type: 'run.ended', status: 'completed' });
    const runs = await runsOf(harness);
    expect(runs.find((run) => run.runId === runId)?.status).not.toBe('awaiting_approval');
    expect(runs.find((run) => run.runId !== runId)).toMatchObject({ status: 'completed' });
  });

  it('rejects a paused plan step named by the approvals route, like a call', async () => {
    const started = await startWithPlanTools();
    harness = started.harness;
    const runId = await pausedPlan(harness);
    const rejected = await harness.request('/v1/sessions/web:1/approvals/s1', {
      method: 'POST',
      json: { decision: 'reject', message: 'not today' },
    });
    expect(rejected.status).toBe(204);
    expect(started.log).toEqual([]);
    expect(await runsOf(harness)).toMatchObject([{ runId, status: 'failed' }]);
    expect(await (await harness.request('/v1/approvals')).json()).toEqual({ pending: [] });
  });

  it('refuses a token without "approve" and an edit of a plan step, changing nothing', async () => {
    const started = await startWithPlanTools();
    harness = started.harness;
    const runId = await pausedPlan(harness);
    const attempts = [
      { path: '/v1/sessions/web:1/approvals/s1', json: { decision: 'approve' }, token: webToken },
      { path: `/v1/sessions/web:1/plans/${runId}/approvals`, json: { approve: ['s1'] }, token: webToken },
      { path: '/v1/sessions/web:1/approvals/s1', json: { decision: 'edit', args: { to: 'eve' } } },
      { path: `/v1/sessions/web:1/plans/${runId}/approvals`, json: { approve: ['nope'] } },
      { path: `/v1/sessions/web:1/plans/${runId}/approvals`, json: {} },
      { path: '/v1/sessions/web:1/plans/run-unknown/approvals', json: { approve: ['s1'] } },
      // An answer naming a request the step does not wait on (an earlier or a made-up one).
      { path: '/v1/sessions/web:1/approvals/s1', json: { decision: 'approve', approvalId: 's1~3' } },
      {
        path: `/v1/sessions/web:1/plans/${runId}/approvals`,
        json: { approve: ['s1'], approvalIds: ['s1~3'] },
      },
    ];
    const statuses: number[] = [];
    for (const { path, json, token } of attempts) {
      const response = await harness.request(path, { method: 'POST', json, token: token ?? adminToken });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([403, 403, 400, 400, 400, 404, 404, 404]);
    expect(started.log).toEqual([]);
    expect(await runsOf(harness)).toMatchObject([{ runId, status: 'awaiting_approval' }]);
    const pending = (await (await harness.request('/v1/approvals')).json()) as { pending: unknown[] };
    expect(pending.pending).toEqual([expect.objectContaining({ runId, toolCallId: 's1', planStep: true })]);
  });
});
