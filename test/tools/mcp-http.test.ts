import { afterEach, describe, expect, it } from 'vitest';
import { createDeferred } from '../../src/core/deferred.js';
import { mcpTools, type McpToolSource } from 'agentlanes/mcp';
import { startHttpMcpServer, type HttpMcpServer } from '../support/mcp/http-server.js';
import { createHarness } from '../support/runtime-harness.js';

const token = 'http-bearer-token-9c4e1a77d3';
const servers: HttpMcpServer[] = [];
const sources: McpToolSource[] = [];
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(hooks: { onCancelled?: (reason: unknown) => void; onSlowStarted?: () => void } = {}) {
  const server = await startHttpMcpServer({ secret: token, ...hooks });
  servers.push(server);
  const source = await mcpTools({
    name: 'remote',
    transport: { url: server.url, headers: { authorization: `Bearer ${token}` } },
    timeoutMs: 10_000,
  });
  sources.push(source);
  return { server, source };
}

describe('mcpTools over Streamable HTTP', () => {
  it('lists and runs the tools of a loopback server, sending the configured headers', async () => {
    const { server, source } = await serve();
    expect(source.current().map((tool) => tool.name)).toContain('remote_read_note');
    const h = createHarness(
      [{ toolCalls: [{ id: 'c1', name: 'remote_read_note', args: { path: 'x.md' } }] }, { text: 'ok' }],
      { tools: [source] },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('read');
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'completed' } });
    expect(h.of('tool.succeeded')).toMatchObject([{ tool: 'remote_read_note', output: 'note:x.md' }]);
    expect(server.authorizations.every((value) => value === `Bearer ${token}`)).toBe(true);
    await h.close();
  });

  it('sends a timed-out call to the server as a cancellation', async () => {
    const started = createDeferred<void>();
    const cancelled = createDeferred<unknown>();
    const { source } = await serve({
      onSlowStarted: () => started.resolve(),
      onCancelled: (reason) => cancelled.resolve(reason),
    });
    const h = createHarness(
      [{ toolCalls: [{ id: 'c1', name: 'remote_slow', args: {} }] }, { text: 'late' }],
      {
        tools: [source],
      },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('wait');
    await started.promise;
    await h.clock.advance(10_000);
    await cancelled.promise;
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'completed' } });
    expect(h.of('tool.failed')).toMatchObject([{ tool: 'remote_slow', error: { code: 'timeout' } }]);
    await h.close();
  });

  it('opens a new session and sends the call again when the server forgot the session', async () => {
    const { server, source } = await serve();
    const h = createHarness(
      [
        { toolCalls: [{ id: 'c1', name: 'remote_read_note', args: { path: 'a.md' } }] },
        { text: 'one' },
        { toolCalls: [{ id: 'c2', name: 'remote_read_note', args: { path: 'b.md' } }] },
        { text: 'two' },
      ],
      { tools: [source] },
    );
    const chat = h.runtime.session('web:1');
    await chat.send('first');
    await chat.waitForEnd({ timeoutMs: 600_000 });
    await server.forgetSessions();
    await chat.send('second');
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'completed' } });
    expect(h.of('tool.succeeded')).toMatchObject([
      { tool: 'remote_read_note', output: 'note:a.md' },
      { tool: 'remote_read_note', output: 'note:b.md' },
    ]);
    expect(h.of('tool.failed')).toEqual([]);
    await h.close();
  });

  it('rejects with tool_failed, without the token, when the server refuses the headers', async () => {
    const server = await startHttpMcpServer({ secret: token });
    servers.push(server);
    const error = await mcpTools({
      name: 'remote',
      transport: { url: server.url, headers: { authorization: `Bearer wrong-${token}` } },
      restart: { attempts: 0 },
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'tool_failed' });
    expect(String((error as Error).message)).not.toContain(token);
  });
});
