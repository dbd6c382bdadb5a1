import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpTools, type McpEvent, type McpToolSource } from 'agentlanes/mcp';
import { filesSecret, startFiles } from '../support/mcp/files-source.js';
import { startHttpMcpServer, type HttpMcpServer } from '../support/mcp/http-server.js';
import { createHarness } from '../support/runtime-harness.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const token = 'http-secret-token-3b8f0e61c2a9';
const servers: HttpMcpServer[] = [];
const sources: McpToolSource[] = [];
afterEach(async () => {
  await Promise.all(sources.splice(0).map((source) => source.close()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** The ledger file and its write-ahead log, as text. */
function ledgerText(path: string): string {
  return [path, `${path}-wal`]
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file).toString('latin1'))
    .join('\n');
}

/** Events in the order of their tool's name: the four calls run in parallel and finish in any order. */
const byTool = <T extends { readonly tool: string }>(events: T[]): T[] =>
  [...events].sort((left, right) => left.tool.localeCompare(right.tool));

describe('mcpTools and secrets', () => {
  it('keeps env and header secrets out of the SQLite ledger, the events and the errors', async () => {
    const files = await startFiles();
    const server = await startHttpMcpServer({ secret: token });
    servers.push(server);
    const remoteEvents: McpEvent[] = [];
    const remote = await mcpTools({
      name: 'remote',
      transport: { url: server.url, headers: { authorization: `Bearer ${token}` } },
      onEvent: (event) => remoteEvents.push(event),
    });
    sources.push(remote);
    const path = tempLedgerPath('mcp-secrets');
    const calls = ['files_echo_secret', 'files_fail_secret', 'remote_echo_secret', 'remote_fail_secret'];
    const h = createHarness(
      [{ toolCalls: calls.map((name) => ({ id: `call-${name}`, name, args: {} })) }, { text: 'done' }],
      { tools: [files.source, remote], ledger: { path } },
    );
    const chat = h.runtime.session('telegram:1');
    await chat.send('leak please');
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'completed' } });
    expect(byTool(h.of('tool.succeeded'))).toMatchObject([
      { tool: 'files_echo_secret', output: 'token=***' },
      { tool: 'remote_echo_secret', output: 'token=***' },
    ]);
    expect(byTool(h.of('tool.failed'))).toMatchObject([
      {
        tool: 'files_fail_secret',
        error: { code: 'tool_failed', message: expect.stringContaining('***') as string },
      },
      {
        tool: 'remote_fail_secret',
        error: { code: 'tool_failed', message: expect.stringContaining('***') as string },
      },
    ]);
    // The server logged its secret: the log event carries it masked.
    await files.next((event) => event.type === 'log' && event.data === 'echoing token=***');
    const transcript = JSON.stringify(await chat.transcript());
    await h.close();
    const seen = [ledgerText(path), JSON.stringify(h.events), JSON.stringify(files.events), transcript];
    seen.push(JSON.stringify(remoteEvents), JSON.stringify(h.model.requests));
    for (const secret of [filesSecret, token]) {
      for (const text of seen) expect(text).not.toContain(secret);
    }
    // The ledger is the real file the run wrote to: the calls are in it.
    expect(ledgerText(path)).toContain('files_echo_secret');
  });
});
