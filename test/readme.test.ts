import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { blockDirectory, blockWith, freePort, readmeBlocks, runBlock, runShell } from './readme/run-block.js';

const root = join(import.meta.dirname, '..');

/**
 * What the README's snippets take from the reader's own code (their chat framework, their payments API, their
 * provider), declared so the snippets type-check alone; everything from agentlanes is the real thing.
 */
const prelude = `
import type { ModelProvider, Runtime, RuntimeOptions, Session } from 'agentlanes';
declare global {
  interface ChatMessage { id: number; text: string; chat: { id: number }; from: { id: number } }
  const bot: {
    on(event: 'message', handler: (message: ChatMessage) => Promise<unknown>): void;
    reply(sessionKey: string, text: string, options?: { idempotencyKey?: string }): Promise<void>;
    stop(): Promise<void>;
  };
  const options: RuntimeOptions;
  const operator: { confirm(question: string): Promise<boolean> };
  function fetchOrder(orderId: string, options: { signal: AbortSignal }): Promise<{ status: string }>;
  const payments: {
    refund(orderId: string, amount: number, options: { signal: AbortSignal }): Promise<{ refundId: string }>;
    cancelRefund(refundId: string): Promise<void>;
  };
  const runtime: Runtime;
  const chat: Session;
  const myProvider: ModelProvider;
}
export {};
`;

/** The README's ```ts blocks, in order. */
function snippets(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

function typeCheck(files: ReadonlyMap<string, string>): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
    baseUrl: root,
    paths: {
      agentlanes: ['./src/index.ts'],
      'agentlanes/testing': ['./src/testing/index.ts'],
      'agentlanes/server': ['./src/server/index.ts'],
      'agentlanes/grammy': ['./src/adapters/grammy/index.ts'],
      'agentlanes/chat-sdk': ['./src/adapters/chat-sdk/index.ts'],
      'agentlanes/openai': ['./src/providers/openai/index.ts'],
      'agentlanes/anthropic': ['./src/providers/anthropic/index.ts'],
      'agentlanes/ai-sdk': ['./src/providers/ai-sdk/index.ts'],
      'agentlanes/otel': ['./src/telemetry/index.ts'],
      'agentlanes/mcp': ['./src/tools/mcp/index.ts'],
      'agentlanes/ledger': ['./src/public/ledger.ts'],
      'agentlanes/providers': ['./src/public/providers.ts'],
      'agentlanes/plans': ['./src/public/plans.ts'],
      'agentlanes/attachments': ['./src/public/attachments.ts'],
      'agentlanes/authority': ['./src/public/authority.ts'],
      'agentlanes/events': ['./src/public/events.ts'],
      'agentlanes/queue': ['./src/public/queue.ts'],
      'agentlanes/clock': ['./src/public/clock.ts'],
    },
  };
  const host = ts.createCompilerHost(options);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const program = ts.createProgram([...files.keys()], options, host);
  // Only the snippets are checked: the package's own sources are checked by `npm run typecheck`.
  const snippetFiles = program.getSourceFiles().filter((file) => files.has(file.fileName));
  return [
    ...program.getOptionsDiagnostics(),
    ...snippetFiles.flatMap((file) => [
      ...program.getSyntacticDiagnostics(file),
      ...program.getSemanticDiagnostics(file),
    ]),
  ].map((diagnostic) => {
    const where = diagnostic.file?.fileName.replace(`${root}/`, '') ?? '';
    const line =
      diagnostic.file === undefined || diagnostic.start === undefined
        ? 0
        : diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1;
    return `${where}:${line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

describe('README.md', () => {
  // A whole-program type check: seconds alone, longer while the other test files share the two cores.
  it(
    'has ts snippets that type-check under strict against the package when compiled one module each',
    { timeout: 120_000 },
    () => {
      const blocks = snippets();
      expect(blocks.length).toBeGreaterThanOrEqual(5);
      const files = new Map<string, string>([[join(root, 'readme-snippets', 'prelude.ts'), prelude]]);
      // Each snippet is its own module: `export {}` keeps one snippet's names out of the next.
      blocks.forEach((block, index) =>
        files.set(join(root, 'readme-snippets', `snippet-${index + 1}.ts`), `${block}\nexport {};\n`),
      );
      expect(typeCheck(files)).toEqual([]);
    },
  );

  it('points at no file outside the repository', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/\.\.\/(shared|seeds)|workspace/);
    for (const [, target] of readme.matchAll(/\]\(([^)#]+)\)/g)) {
      if (/^https?:/.test(target as string)) continue;
      expect(() => readFileSync(join(root, target as string)), `README links ${target}`).not.toThrow();
    }
  });

  it('keeps the two commands a newcomer runs', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });

  it('runs the approval loop as shown when the operator approves inside the approval.requested handler', async () => {
    const clock = fakeClock({ now: 0 });
    const refunded: string[] = [];
    const refund = defineTool({
      name: 'refund',
      description: 'Refund an order',
      risk: 'high',
      input: z.object({ orderId: z.string(), amount: z.number() }),
      execute: ({ orderId }) => Promise.resolve(void refunded.push(orderId)),
    });
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: {
        scripted: scriptedModel(
          [
            { toolCalls: [{ id: 'call-1', name: 'refund', args: { orderId: 'A7', amount: 5 } }] },
            { text: 'done' },
          ],
          { clock },
        ),
      },
      model: { provider: 'scripted', model: 'm' },
      tools: [refund],
      clock,
      ids: sequentialIds(),
    });
    const chat = runtime.session('telegram:1');
    const stop = new AbortController();
    const operator = (async () => {
      const types = ['approval.requested', 'tool.deferred'] as const;
      for await (const event of chat.events({
        consumer: 'operator',
        types: [...types],
        signal: stop.signal,
      })) {
        if (event.type === 'approval.requested')
          await chat.approve({ toolCallId: event.toolCallId, decision: 'approve' });
      }
    })();
    await chat.send({ text: 'refund A7 please' });
    const ended = chat.waitForEnd({ timeoutMs: 60_000 });
    await clock.advance(0);
    let result = await ended;
    // The operator may still be acting when the first answer comes back `paused`: wait for the end then.
    for (let round = 0; result.status === 'paused' && round < 10; round++) {
      await clock.advance(10);
      result = await chat.waitForEnd({ timeoutMs: 60_000 });
    }
    expect(result).toMatchObject({ status: 'ended', run: { status: 'completed', text: 'done' } });
    expect(refunded).toEqual(['A7']);
    stop.abort();
    await operator;
    await runtime.close();
  });
});

/**
 * The README blocks no test runs, each with its reason. Every other block is run below; a block that is in
 * neither list fails the last test here.
 */
const notRun: ReadonlyArray<{ readonly marker: string; readonly reason: string }> = [
  {
    marker: 'npm install && npm start',
    reason: 'the build, the demo and the test suites themselves (CI runs them)',
  },
  { marker: 'npx agentlanes sessions', reason: "reads the demo's ledger; test/cli runs sessions and replay" },
  {
    marker: 'npm pack',
    reason: 'clones, builds and packs the package: minutes of build, and a network fetch',
  },
  { marker: 'pdfBytes', reason: 'downloads from a public host; test/attachments runs url parts on loopback' },
  {
    marker: '@modelcontextprotocol/server-filesystem',
    reason:
      'fetches a server from npm and reaches a remote one; test/tools/mcp-* and test/examples run mcpTools locally',
  },
  {
    marker: 'postgres://bot@db',
    reason: 'needs a Postgres server named db; test/cluster runs the same options',
  },
  { marker: 'useChat', reason: 'React in a browser; test/server runs the chat route with the AI SDK client' },
  { marker: 'agentlanes serve --config', reason: 'the CLI serve test runs the sample config' },
  {
    marker: 'traceRuntime(runtime)',
    reason: 'prints spans to the console; test/telemetry runs traceRuntime with the SDK in-memory exporter',
  },
  {
    marker: 'withTraceContext({',
    reason:
      'needs an active span of an application; test/telemetry sends through withTraceContext, on a cluster too',
  },
];

/** The markers of the blocks the tests below run. */
const run = [
  "bot.on('message'",
  'fakeClock({ now: 0 })',
  'openaiProvider({',
  'aiSdkProvider({ model: (apiKey, modelId)',
  'runtime.fork(',
  "name: 'refund',",
  'executePlan(',
  'createServer(runtime',
  '/v1/approvals',
];

describe('README.md blocks, run', () => {
  let directory: ReturnType<typeof blockDirectory>;
  beforeEach(() => {
    directory = blockDirectory();
  });
  afterEach(() => directory.remove());

  /** Run a block that ends by itself; it must exit 0 and print `{ ok: true }` last (the epilogue's checks). */
  async function runToEnd(marker: string, parts: { prologue?: string; epilogue?: string } = {}) {
    const running = runBlock(directory.dir, 'block', { ...parts, code: blockWith(marker).code });
    const { code, stderr } = await running.exited;
    expect({ code, last: running.records.at(-1) }, stderr).toEqual({ code: 0, last: { ok: true } });
    return running;
  }

  // Child processes that load the sources through tsx: a few seconds each alone, longer on a shared machine.
  const childBudget = { timeout: 180_000 };

  it(
    'runs the bot: it replies, says sorry for a failed run, stops on SIGTERM after the reply in hand, and a restart sends nothing twice',
    childBudget,
    async () => {
      const code = blockWith("bot.on('message'").code;
      const epilogue = 'readme.report({ loopEnded: true });';
      const first = runBlock(directory.dir, 'bot', { code, epilogue });
      const replyTo = (key: string) => (record: Record<string, unknown>) =>
        (record.reply as { sessionKey?: string } | undefined)?.sessionKey === key;
      first.send({ id: 1, text: 'where is my order A7?', chat: { id: 1 }, from: { id: 7 } });
      expect((await first.waitFor(replyTo('telegram:1'))).reply).toMatchObject({
        text: 'Done: {"status":"A7 shipped"}',
      });
      first.send({ id: 2, text: 'please fail', chat: { id: 2 }, from: { id: 7 } });
      expect((await first.waitFor(replyTo('telegram:2'))).reply).toMatchObject({
        text: 'Sorry, something went wrong. Please ask again.',
      });
      first.send({ id: 3, text: 'a slow one', chat: { id: 3 }, from: { id: 7 } });
      await first.waitFor((record) => record.replying !== undefined);
      first.child.kill('SIGTERM');
      const stopped = await first.exited;
      expect(stopped.code, stopped.stderr).toBe(0);
      // The reply in hand went out, and the loop ended before close() let the process exit.
      const after = first.records.slice(first.records.findIndex((record) => record.replying !== undefined));
      expect(after.map((record) => Object.keys(record)[0])).toEqual([
        'replying',
        'stopped',
        'reply',
        'loopEnded',
      ]);

      const second = runBlock(directory.dir, 'bot', { code, epilogue });
      second.send({ id: 4, text: 'hello', chat: { id: 4 }, from: { id: 7 } });
      await second.waitFor(replyTo('telegram:4'));
      second.child.kill('SIGTERM');
      const restarted = await second.exited;
      expect(restarted.code, restarted.stderr).toBe(0);
      const replies = second.records.filter((record) => record.reply !== undefined);
      expect(replies.map((record) => record.reply)).toMatchObject([
        { sessionKey: 'telegram:4', text: 'Hello! How can I help?' },
      ]);
    },
  );

  it('runs the testing block, which advances the fake clock it gave the runtime', childBudget, async () => {
    await runToEnd('fakeClock({ now: 0 })', { epilogue: 'readme.report({ ok: true });' });
  });

  it('runs the providers block: the runtime opens without any key set', childBudget, async () => {
    await runToEnd('openaiProvider({', {
      epilogue: `assert.equal(runtime.session('telegram:1').status().state, 'idle');
await runtime.close();
readme.report({ ok: true });`,
    });
  });

  it('runs the AI SDK block: the runtime opens without any key set', childBudget, async () => {
    await runToEnd('aiSdkProvider({ model: (apiKey, modelId)', {
      epilogue: `assert.equal(runtime.session('telegram:1').status().state, 'idle');
await runtime.close();
readme.report({ ok: true });`,
    });
  });

  it(
    'runs the fork block: the child inherits the parent run and answers its own message',
    childBudget,
    async () => {
      await runToEnd('runtime.fork(', {
        prologue: `await runtime.session('telegram:12345').send({ id: 'p1', text: 'I paid by bank transfer' });
await readme.firstRunEnded(runtime.session('telegram:12345'));`,
        epilogue: `const childRun = await readme.firstRunEnded(runtime.session('telegram:12345/what-if'));
assert.equal(childRun.status, 'completed');
const turns = await runtime.session('telegram:12345/what-if').transcript();
assert.deepEqual(turns.map((turn) => turn.sessionKey), ['telegram:12345', 'telegram:12345', 'telegram:12345/what-if', 'telegram:12345/what-if']);
await runtime.close();
readme.report({ ok: true });`,
      });
    },
  );

  it(
    'runs the tools block: the operator approves inside the loop, undo compensates, the desk stops',
    childBudget,
    async () => {
      await runToEnd("name: 'refund',", {
        epilogue: `await chat.send({ id: 'tg-1', text: 'refund order A7, it arrived broken' });
assert.equal((await readme.firstRunEnded(chat)).status, 'completed');
await undoLastRun();
await closeDesk();
assert.deepEqual(readme.calls, ['confirm refund {"orderId":"A7","amount":5}?', 'refund A7 5', 'cancel r-A7']);
await runtime.close();
readme.report({ ok: true });`,
      });
    },
  );

  it('runs the plans block: the refunds wait for approval, then every step runs', childBudget, async () => {
    await runToEnd('executePlan(', {
      epilogue: `assert.equal(result.status, 'awaiting_approval');
assert.deepEqual(readme.calls, ['refund c-7-A7 5', 'refund c-7-B2 5', 'email Refunded ["c-7-A7","c-7-B2"]']);
await runtime.close();
readme.report({ ok: true });`,
    });
  });

  it(
    'runs the server block and its curl commands: send, follow, find the call id, approve',
    childBudget,
    async () => {
      const port = await freePort();
      const atPort = (text: string) => text.replaceAll('8787', String(port));
      const tokens = { WEB_TOKEN: 'web-token-readme-0001', OPERATOR_TOKEN: 'operator-token-readme-0001' };
      const server = runBlock(
        directory.dir,
        'server',
        {
          code: atPort(blockWith('createServer(runtime').code),
          epilogue: `readme.report({ url: server.url });
process.once('SIGTERM', () => void server.close().then(() => runtime.close()).then(() => readme.report({ ok: true })));`,
        },
        tokens,
      );
      try {
        await server.waitFor((record) => record.url !== undefined);
        const outputs = await runShell(atPort(blockWith('/v1/approvals').code), tokens, 'approval.requested');
        const [sent, events, pending, , approved] = outputs;
        expect(JSON.parse(sent ?? '')).toMatchObject({ messageId: 'm-1', disposition: 'started' });
        const requested = /data: (\{"type":"approval.requested".*)/.exec(events ?? '')?.[1];
        const callId = (JSON.parse(requested ?? '{}') as { toolCallId?: string }).toolCallId;
        expect(callId).toEqual(expect.any(String));
        expect(JSON.parse(pending ?? '')).toMatchObject({
          pending: [{ sessionKey: 'web:42', toolCallId: callId, tool: 'refund' }],
        });
        // The approve answers 204 with no body: the run going on to the refund shows it was taken.
        expect(approved).toBe('');
        const ended = await fetch(`http://127.0.0.1:${port}/v1/sessions/web:42/wait?timeoutMs=30000`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.OPERATOR_TOKEN}` },
        });
        expect(await ended.json()).toMatchObject({ status: 'ended', run: { status: 'completed' } });
        expect(server.records.filter((record) => record.call !== undefined)).toEqual([
          { call: 'refund A7 5' },
        ]);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    },
  );

  it('has no block that is neither run by a test nor named with the reason it is not', () => {
    const unaccounted = readmeBlocks().filter(
      (block) =>
        [...run, ...notRun.map((entry) => entry.marker)].filter((marker) => block.code.includes(marker))
          .length !== 1,
    );
    expect(unaccounted.map((block) => block.code.split('\n')[0])).toEqual([]);
  });
});
