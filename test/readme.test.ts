import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createMemoryLedger, createRuntime, defineTool, sequentialIds } from 'agentlanes';
import { fakeClock, scriptedModel } from 'agentlanes/testing';

const root = join(import.meta.dirname, '..');

/**
 * What the README's snippets take from the reader's own code (their chat framework, their payments API, their
 * provider), declared so the snippets type-check alone; everything from agentlanes is the real thing.
 */
const prelude = `
import type { ModelProvider, Runtime, Session } from 'agentlanes';
declare global {
  interface ChatMessage { id: number; text: string; chat: { id: number }; from: { id: number } }
  const bot: {
    on(event: 'message', handler: (message: ChatMessage) => Promise<unknown>): void;
    reply(sessionKey: string, text: string, options?: { idempotencyKey?: string }): Promise<void>;
  };
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
