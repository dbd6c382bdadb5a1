import { afterEach, describe, expect, it } from 'vitest';
import { readEvents, sseMessages, startServer, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The value of one sample line of a Prometheus text page. */
function sampleOf(text: string, line: string): number | undefined {
  const found = text.split('\n').find((row) => row.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

describe('createServer: runtime-wide routes', () => {
  it('pages sessions by key with next', async () => {
    harness = await startServer([{ text: 'a' }, { text: 'b' }, { text: 'c' }]);
    for (const key of ['web:c', 'web:a', 'web:b']) {
      await harness.request(`/v1/sessions/${key}/messages`, { method: 'POST', json: { text: 'hi' } });
    }
    const first = (await (await harness.request('/v1/sessions?limit=2')).json()) as {
      sessions: { key: string }[];
      next?: string;
    };
    expect(first.sessions.map((session) => session.key)).toEqual(['web:a', 'web:b']);
    expect(first.next).toBe('web:b');
    const second = (await (await harness.request(`/v1/sessions?limit=2&after=${first.next}`)).json()) as {
      sessions: { key: string }[];
      next?: string;
    };
    expect(second).toMatchObject({ sessions: [{ key: 'web:c' }] });
    expect(second.next).toBeUndefined();
    expect((await harness.request('/v1/sessions?limit=0')).status).toBe(400);
  });

  it('counts messages, runs and stream clients in /metrics and /v1/stats', async () => {
    harness = await startServer([{ text: 'a' }, { hang: true }]);
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { id: 'x', text: 'hi' } });
    const stream = sseMessages(await harness.request('/v1/sessions/web:1/events'));
    await readEvents(stream, (event) => event.type === 'run.ended');
    await harness.request('/v1/sessions/web:1/messages', { method: 'POST', json: { id: 'x', text: 'hi' } });
    await harness.request('/v1/sessions/web:2/messages', { method: 'POST', json: { text: 'hang' } });
    await harness.request('/v1/sessions/web:2/messages', {
      method: 'POST',
      json: { text: 'no', mode: 'reject' },
    });

    const response = await harness.request('/metrics');
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(sampleOf(text, 'agentlanes_messages_total{disposition="started"}')).toBe(2);
    expect(sampleOf(text, 'agentlanes_messages_total{disposition="duplicate"}')).toBe(1);
    expect(sampleOf(text, 'agentlanes_messages_total{disposition="rejected"}')).toBe(1);
    expect(sampleOf(text, 'agentlanes_runs_total{status="completed"}')).toBe(1);
    expect(sampleOf(text, 'agentlanes_lane_running{lane="global"}')).toBe(1);
    expect(sampleOf(text, 'agentlanes_subagent_lane_running')).toBe(0);
    expect(sampleOf(text, 'agentlanes_event_stream_clients')).toBe(1);
    expect(text).toContain('# TYPE agentlanes_runs_total counter');

    const stats = (await (await harness.request('/v1/stats')).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({
      liveSessions: 2,
      lanes: { global: { running: 1, pending: 0 } },
      subagents: { running: 0, pending: 0 },
      sessions: { total: 2, byState: { idle: 1, streaming: 1 } },
      eventStreams: { open: 1, opened: 1, slowClients: 0 },
    });
    await stream.return?.();
    await harness.request('/v1/sessions/web:2/abort', { method: 'POST' });
  });
});
