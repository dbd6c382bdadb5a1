import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRuntimeError } from 'agentlanes';
import { fakeClock, type ScriptEntry } from 'agentlanes/testing';
import { mcpTools } from 'agentlanes/mcp';
import { createHarness } from '../support/runtime-harness.js';
import { filesTransport, logOf, startFiles } from '../support/mcp/files-source.js';

type Harness = ReturnType<typeof createHarness>;

async function runOnce(h: Harness, text = 'go') {
  const chat = h.runtime.session('telegram:1');
  await chat.send(text);
  const ended = await chat.waitForEnd({ timeoutMs: 600_000 });
  await h.settled();
  return { chat, ended };
}

const call = (name: string, args: object = {}, id = `call-${name}`): ScriptEntry => ({
  toolCalls: [{ id, name, args }],
});

describe('mcpTools over stdio', () => {
  it('runs a server tool the scripted model calls, showing the model the server schema', async () => {
    const { source } = await startFiles();
    const h = createHarness([call('files_read_note', { path: 'todo.md' }), { text: 'done' }], {
      tools: [source],
    });
    const { ended } = await runOnce(h);
    expect(ended).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'done' } });
    expect(h.of('tool.succeeded')).toMatchObject([{ tool: 'files_read_note', output: 'note:todo.md' }]);
    const shown = h.model.requests[0]?.tools.find((tool) => tool.name === 'files_read_note');
    expect(shown).toMatchObject({
      description: 'Read a note',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', minLength: 1 } },
        required: ['path'],
      },
    });
    await h.close();
  });

  it('refuses arguments that do not match the server schema with args_invalid, before the server', async () => {
    const { source } = await startFiles();
    const h = createHarness([call('files_read_note', { path: '' }), { text: 'sorry' }], {
      tools: [source],
      limits: { toolCorrectionBudget: 1 },
    });
    await runOnce(h);
    expect(h.of('tool.failed')).toMatchObject([
      {
        tool: 'files_read_note',
        error: { code: 'args_invalid', message: expect.stringContaining('path') as string },
      },
    ]);
    await h.close();
  });

  it('takes risk from annotations: a destructive tool waits for approval, a read-only one does not', async () => {
    const { source } = await startFiles({ risk: { pid: 'high' } });
    const risks = Object.fromEntries(source.current().map((tool) => [tool.name, tool.risk]));
    expect(risks).toMatchObject({
      files_read_note: 'low',
      files_delete_note: 'high',
      files_add_tool: 'low',
      files_pid: 'high',
    });
    // Read-only tools may run again when a crash cut a call before its outcome was recorded; others wait.
    const idempotent = source.current().filter((tool) => tool.idempotent === true);
    expect(idempotent.map((tool) => tool.name)).toContain('files_read_note');
    expect(idempotent.map((tool) => tool.name)).not.toContain('files_delete_note');
    const h = createHarness([call('files_delete_note', { path: 'old.md' }), { text: 'deleted' }], {
      tools: [source],
    });
    const { chat, ended } = await runOnce(h);
    expect(ended).toMatchObject({ status: 'paused', state: 'awaiting_approval' });
    expect(h.of('tool.succeeded')).toEqual([]);
    await chat.approve({ toolCallId: 'call-files_delete_note', decision: 'approve' });
    expect(await chat.waitForEnd()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
    expect(h.of('tool.succeeded')).toMatchObject([{ tool: 'files_delete_note', output: 'deleted:old.md' }]);
    await h.close();
  });

  it('goes through the tool policy and groups: a denied group hides the server tools', async () => {
    const { source } = await startFiles();
    const h = createHarness([call('files_read_note', { path: 'a' }), { text: 'no' }], {
      tools: [source],
      toolGroups: { ...source.groups },
      toolPolicy: [{ deny: ['group:files'] }],
    });
    expect(source.groups).toEqual({ files: ['files_*'] });
    const { ended } = await runOnce(h);
    expect(h.model.requests[0]?.tools).toEqual([]);
    expect(ended).toMatchObject({ run: { error: { code: 'tool_denied' } } });
    await h.close();
  });

  it('sends the abort of a run to the server as a cancellation', async () => {
    const files = await startFiles();
    const h = createHarness([call('files_slow'), { text: 'never' }], { tools: [files.source] });
    const chat = h.runtime.session('telegram:1');
    await chat.send('wait');
    await files.next(logOf('slow started'));
    expect(await chat.abort({ reason: 'user sent /stop' })).toBe(true);
    expect(await files.next(logOf('slow cancelled'))).toMatchObject({ type: 'log' });
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'aborted' } });
    await h.close();
  });

  it('sends a tool timeout to the server as a cancellation and fails the call with timeout', async () => {
    const files = await startFiles({ timeoutMs: 5_000 });
    const h = createHarness([call('files_slow'), { text: 'gave up' }], { tools: [files.source] });
    const chat = h.runtime.session('telegram:1');
    await chat.send('wait');
    await files.next(logOf('slow started'));
    await h.clock.advance(5_000);
    await files.next(logOf('slow cancelled'));
    expect(await chat.waitForEnd({ timeoutMs: 600_000 })).toMatchObject({ run: { status: 'completed' } });
    expect(h.of('tool.failed')).toMatchObject([{ tool: 'files_slow', error: { code: 'timeout' } }]);
    await h.close();
  });
});

describe('mcpTools when the server goes away', () => {
  it('restarts a killed stdio server on the next use', async () => {
    const files = await startFiles();
    const h = createHarness([call('files_pid'), { text: 'one' }, call('files_pid'), { text: 'two' }], {
      tools: [files.source],
    });
    await runOnce(h);
    const first = Number(h.of('tool.succeeded')[0]?.output);
    process.kill(first, 'SIGKILL');
    await files.next((event) => event.type === 'disconnected');
    await runOnce(h, 'again');
    const second = Number(h.of('tool.succeeded')[1]?.output);
    expect(second).toBeGreaterThan(0);
    expect(second).not.toBe(first);
    expect(files.events.filter((event) => event.type === 'connected')).toMatchObject([
      { restart: false },
      { restart: true },
    ]);
    await h.close();
  });

  it('fails the tools with a clear tool_failed when restarts are off', async () => {
    const files = await startFiles({ restart: { attempts: 0 } });
    const h = createHarness([call('files_pid'), { text: 'one' }, call('files_pid'), { text: 'two' }], {
      tools: [files.source],
    });
    await runOnce(h);
    process.kill(Number(h.of('tool.succeeded')[0]?.output), 'SIGKILL');
    await files.next((event) => event.type === 'disconnected');
    await runOnce(h, 'again');
    expect(h.of('tool.failed')).toMatchObject([
      {
        tool: 'files_pid',
        error: { code: 'tool_failed', message: 'MCP server "files" is down and restarts are off' },
      },
    ]);
    await h.close();
  });

  it('gives up after the configured restart attempts, backing off on the clock between them', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'agentlanes-mcp-'));
    const refuse = join(folder, 'refuse');
    try {
      // One fake clock for the runtime and the restart backoff.
      const clock = fakeClock({ now: 0 });
      const files = await startFiles({
        transport: { ...filesTransport, env: { ...filesTransport.env, FILES_REFUSE_IF: refuse } },
        restart: { attempts: 2, baseMs: 1_000 },
        clock,
      });
      const run = createHarness([call('files_pid'), { text: 'one' }, call('files_pid'), { text: 'two' }], {
        tools: [files.source],
        clock,
      });
      await runOnce(run);
      writeFileSync(refuse, '');
      process.kill(Number(run.of('tool.succeeded')[0]?.output), 'SIGKILL');
      await files.next((event) => event.type === 'disconnected');
      const chat = run.runtime.session('telegram:1');
      await chat.send('again');
      await files.next((event) => event.type === 'start_failed' && event.attempt === 1);
      expect(files.events.filter((event) => event.type === 'start_failed')).toHaveLength(1);
      await clock.advance(1_000);
      await files.next((event) => event.type === 'start_failed' && event.attempt === 2);
      await chat.waitForEnd({ timeoutMs: 600_000 });
      expect(run.of('tool.failed')).toMatchObject([{ tool: 'files_pid', error: { code: 'tool_failed' } }]);
      expect(run.of('tool.failed')[0]?.error.message).toMatch(
        /^MCP server "files" could not be restarted \(2 attempts\)/,
      );
      await run.close();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('rejects with tool_failed when the server cannot start', async () => {
    const error = await mcpTools({
      name: 'broken',
      transport: { command: process.execPath, args: ['-e', 'process.exit(3)'], stderr: 'ignore' },
    }).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'tool_failed')).toBe(true);
    expect((error as Error).message).toContain('MCP server "broken" could not be started');
  });

  it('refuses bad options with invalid_input, without echoing a secret', async () => {
    const error = await mcpTools({
      name: 'bad name!',
      transport: { ...filesTransport, env: { FILES_TOKEN: 'top-secret-value-1234' } },
    }).catch((caught: unknown) => caught);
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect((error as Error).message).not.toContain('top-secret-value-1234');
  });
});

describe('mcpTools when the tool list changes', () => {
  it('picks up notifications/tools/list_changed: the next run sees and calls the new tool', async () => {
    const files = await startFiles();
    const h = createHarness(
      [
        call('files_add_tool', { name: 'weather' }),
        { text: 'added' },
        call('files_weather'),
        { text: 'sunny' },
      ],
      { tools: [files.source] },
    );
    const before = files.events.length;
    await runOnce(h);
    await files.next(
      (event) => event.type === 'tools_changed' && event.tools.includes('files_weather'),
      before,
    );
    await runOnce(h, 'weather?');
    expect(h.model.requests[0]?.tools.map((tool) => tool.name)).not.toContain('files_weather');
    expect(h.model.requests[2]?.tools.map((tool) => tool.name)).toContain('files_weather');
    expect(h.of('tool.succeeded').at(-1)).toMatchObject({ tool: 'files_weather', output: 'weather ran' });
    await h.close();
  });
});
