import { mkdtempSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type ModelProvider, type RuntimeEvent } from 'agentlanes';
import { anthropicProvider } from 'agentlanes/anthropic';
import { openaiProvider } from 'agentlanes/openai';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { errorOf } from '../support/error-of.js';
import { downloadRefusal } from '../../src/tools/workspace-download.js';
import { startSseServer, type SseServer } from '../support/sse-server.js';

const directories: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});
function tempDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-wire-'));
  directories.push(directory);
  return directory;
}

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');

/** A runtime on `provider`/`model` with a fresh workspace; `ended()` resolves at its first run's end. */
function runtimeOn(provider: ModelProvider, model: string) {
  const root = tempDirectory();
  const clock = fakeClock({ now: 0 });
  const runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { main: provider },
    model: { provider: 'main', model },
    workspace: { root },
    // The loopback file servers of these tests are named in allowHosts: the documented way to fetch from one.
    attachments: { downloadTimeoutMs: 5000, fetch: { allowHosts: ['127.0.0.1'] } },
    clock,
  });
  const ended = createDeferred<RuntimeEvent>();
  const stop = new AbortController();
  const reading = (async () => {
    for await (const event of runtime.events({ signal: stop.signal }))
      if (event.type === 'run.ended') ended.resolve(event);
  })();
  closers.push(async () => {
    const closing = runtime.close();
    await clock.runAll();
    await closing;
    stop.abort();
    await reading;
  });
  return { runtime, root, clock, ended: ended.promise };
}

async function sseServer(): Promise<SseServer> {
  const server = await startSseServer();
  closers.push(() => server.close());
  return server;
}

/** A loopback HTTP server serving `body` with `contentType` at every path. */
async function fileServer(body: Buffer, contentType: string): Promise<string> {
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': contentType });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const openaiAnswer = {
  sse: [
    {
      data: {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, delta: { content: 'A cat.' }, finish_reason: 'stop' }],
      },
    },
    { data: '[DONE]' },
  ],
};

const anthropicAnswer = {
  sse: [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'm',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'claude-x',
          stop_reason: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
    },
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'A cat.' } },
    },
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ],
};

const inlineImage = {
  type: 'binary' as const,
  data: png,
  mediaType: 'image/png',
  name: 'cat.png',
  mode: 'inline' as const,
};

describe('inline image parts on the wire', () => {
  it('reach OpenAI chat completions as an image_url data URL after the text', async () => {
    const server = await sseServer();
    server.enqueue(openaiAnswer);
    const h = runtimeOn(openaiProvider({ baseURL: server.url, apiKey: 'sk-test' }), 'gpt-4o-mini');
    await h.runtime.session('s').send({ text: 'what is this?', parts: [inlineImage] });
    expect(await h.ended).toMatchObject({ status: 'completed' });
    expect((server.requests[0]?.body as { messages: unknown[] }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?\n\n[Attachment "cat.png" (image/png) is included inline]' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
        ],
      },
    ]);
  });

  it('reach Anthropic Messages as an image block with a base64 source', async () => {
    const server = await sseServer();
    server.enqueue(anthropicAnswer);
    const h = runtimeOn(anthropicProvider({ baseURL: server.url, apiKey: 'sk-test' }), 'claude-sonnet-4-5');
    await h.runtime.session('s').send({ text: 'what is this?', parts: [inlineImage] });
    expect(await h.ended).toMatchObject({ status: 'completed' });
    expect((server.requests[0]?.body as { messages: unknown[] }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?\n\n[Attachment "cat.png" (image/png) is included inline]' },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') },
          },
        ],
      },
    ]);
  });

  it('are refused with unsupported_content for a model its provider says takes no images', async () => {
    const server = await sseServer();
    const h = runtimeOn(openaiProvider({ baseURL: server.url, apiKey: 'sk-test' }), 'gpt-3.5-turbo');
    const error = await errorOf(h.runtime.session('s').send({ text: 'x', parts: [inlineImage] }));
    expect(error).toMatchObject({ code: 'unsupported_content' });
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(h.root, '.blobs'))).toBe(false);
  });
});

describe('url parts', () => {
  it('are downloaded into the session directory and named in the prompt (file mode)', async () => {
    const url = await fileServer(png, 'image/png');
    const model = scriptedModel([{ text: 'ok' }]);
    const h = runtimeOn(model, 'm');
    await h.runtime
      .session('chat:1')
      .send({ text: 'see', parts: [{ type: 'url', url: `${url}/pics/cat.png` }] });
    await h.ended;
    const [copy] = readdirSync(join(h.root, 'chat:1'));
    expect(copy).toMatch(/^[0-9a-f]{16}-cat\.png$/);
    expect(model.requests[0]?.messages.at(-1)).toEqual({
      role: 'user',
      content: `see\n\n[Attachment "cat.png" (image/png, ${png.length} bytes) saved at ${join(h.root, 'chat:1', copy as string)}]`,
    });
  });

  it('are refused when inline and the downloaded type is one no model takes, leaving no blob', async () => {
    const url = await fileServer(Buffer.from('a,b\n'), 'text/csv');
    const h = runtimeOn(scriptedModel([]), 'm');
    const error = await errorOf(
      h.runtime
        .session('s')
        .send({ text: 'x', parts: [{ type: 'url', url: `${url}/t.csv`, mode: 'inline' }] }),
    );
    expect(error).toMatchObject({ code: 'unsupported_content' });
    expect(existsSync(join(h.root, '.blobs')) ? readdirSync(join(h.root, '.blobs')) : []).toEqual([]);
    expect(await h.runtime.session('s').transcript()).toEqual([]);
  });

  it('are refused when the download does not have the declared media type', async () => {
    const url = await fileServer(png, 'image/png');
    const h = runtimeOn(scriptedModel([]), 'm');
    const error = await errorOf(
      h.runtime.session('s').send({ text: 'x', parts: [{ type: 'url', url, mediaType: 'application/pdf' }] }),
    );
    // The one refusal of every failed download (docs/attachments.md, "Fetch policy").
    expect(error).toMatchObject({
      code: 'invalid_input',
      message: downloadRefusal,
      details: { reason: 'type' },
    });
  });
});
