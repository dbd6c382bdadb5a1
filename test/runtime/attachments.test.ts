import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  existsSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, createSqliteLedger, type RuntimeEvent } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { fakeClock, scriptedModel, type Script } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { errorOf } from '../support/error-of.js';
import { filePartRefusal } from '../../src/tools/workspace-paths.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});
function tempDirectory(label: string): string {
  const directory = mkdtempSync(join(tmpdir(), `agentlanes-${label}-`));
  directories.push(directory);
  return directory;
}

/** A 1x1 PNG's bytes (the signature is enough for the model: the runtime never decodes them). */
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
const pngBase64 = png.toString('base64');

function setup(script: Script, options: { inline?: ('image' | 'audio' | 'pdf')[]; ledger?: unknown } = {}) {
  const root = tempDirectory('workspace');
  const clock = fakeClock({ now: 0 });
  const model = scriptedModel(script, {
    clock,
    ...(options.inline === undefined ? {} : { inline: options.inline }),
  });
  const ledger = createMemoryLedger();
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    workspace: { root },
    attachments: { maxPartBytes: 1000, maxMessageBytes: 1500 },
    clock,
    ids: sequentialIds(),
  });
  const events: RuntimeEvent[] = [];
  const waiters: { test: (event: RuntimeEvent) => boolean; resolve: () => void }[] = [];
  const stop = new AbortController();
  const reading = (async () => {
    for await (const event of runtime.events({ signal: stop.signal })) {
      events.push(event);
      for (const waiter of waiters.filter((one) => one.test(event))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  })();
  return {
    root,
    /** Resolves once `count` runs ended (reading inline bytes is real I/O: the fake clock cannot wait for it). */
    ended(count: number): Promise<void> {
      const deferred = createDeferred<void>();
      let seen = events.filter((event) => event.type === 'run.ended').length;
      if (seen >= count) deferred.resolve();
      else
        waiters.push({
          test: (event) => event.type === 'run.ended' && ++seen >= count,
          resolve: () => deferred.resolve(),
        });
      return deferred.promise;
    },
    clock,
    model,
    ledger,
    runtime,
    events,
    async close() {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
      stop.abort();
      await reading;
    },
  };
}

/** Let the session's run end on the fake clock. */
async function settle(
  clock: ReturnType<typeof fakeClock>,
  chat: { waitForEnd(options: { timeoutMs: number }): Promise<unknown> },
) {
  const ended = chat.waitForEnd({ timeoutMs: 60_000 });
  await clock.advance(60_000);
  expect(((await ended) as { status: string }).status).toMatch(/ended|idle/);
}

/** The name of the one blob stored under `root`. */
function blobName(root: string): string {
  const [name, ...more] = readdirSync(join(root, '.blobs'));
  expect(more).toEqual([]);
  return name as string;
}

/** Every file under `directory`, relative, sorted. */
function filesUnder(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1))
    .sort();
}

describe('send() with content parts', () => {
  it('stores a file-mode part in the session directory and names its path in the prompt', async () => {
    const h = setup([{ text: 'seen' }]);
    const chat = h.runtime.session('telegram:42');
    await chat.send({
      id: 'm1',
      text: 'what is in this?',
      parts: [{ type: 'binary', data: png, mediaType: 'image/png', name: 'photo.png' }],
    });
    await settle(h.clock, chat);
    const user = h.model.requests[0]?.messages.at(-1);
    const stored = filesUnder(h.root);
    const blob = stored.find((path) => path.startsWith('.blobs/')) as string;
    const sessionCopy = stored.find((path) => path.startsWith('telegram:42/')) as string;
    expect(stored).toHaveLength(2);
    expect(readFileSync(join(h.root, blob))).toEqual(png);
    expect(readFileSync(join(h.root, sessionCopy))).toEqual(png);
    expect(sessionCopy).toMatch(/^telegram:42\/[0-9a-f]{16}-photo\.png$/);
    expect(user).toEqual({
      role: 'user',
      content: `what is in this?\n\n[Attachment "photo.png" (image/png, ${png.length} bytes) saved at ${join(h.root, sessionCopy)}]`,
    });
    const [record] = await h.ledger.listMessages('telegram:42');
    expect(record?.parts).toEqual([
      {
        type: 'attachment',
        source: 'binary',
        mode: 'file',
        name: 'photo.png',
        mediaType: 'image/png',
        size: png.length,
        sha256: blob.slice('.blobs/'.length),
        path: join(h.root, sessionCopy),
      },
    ]);
    expect(JSON.stringify(record)).not.toContain(pngBase64);
    await h.close();
  });

  it('passes an inline part into the model context and keeps only its reference in the transcript', async () => {
    const h = setup([{ text: 'a cat' }]);
    const chat = h.runtime.session('s');
    await chat.send({
      parts: [{ type: 'binary', data: pngBase64, mediaType: 'image/png', name: 'c.png', mode: 'inline' }],
    });
    await h.ended(1);
    const user = h.model.requests[0]?.messages.at(-1);
    expect(user).toMatchObject({
      role: 'user',
      content: '[Attachment "c.png" (image/png) is included inline]',
      attachments: [{ kind: 'image', mediaType: 'image/png', name: 'c.png', data: pngBase64 }],
    });
    const turns = await chat.transcript();
    expect(turns[0]?.attachments).toEqual([
      {
        kind: 'image',
        mediaType: 'image/png',
        name: 'c.png',
        sha256: blobName(h.root),
      },
    ]);
    expect(JSON.stringify(turns)).not.toContain(pngBase64);
    await h.close();
  });

  it('sends earlier inline attachments again with the history, and names one whose blob was removed', async () => {
    const h = setup([{ text: 'a cat' }, { text: 'still a cat' }, { text: 'gone' }]);
    const chat = h.runtime.session('s');
    const image = {
      type: 'binary' as const,
      data: png,
      mediaType: 'image/png',
      name: 'c.png',
      mode: 'inline' as const,
    };
    await chat.send({ text: 'what?', parts: [image] });
    await h.ended(1);
    await chat.send('and now?');
    await h.ended(2);
    expect(h.model.requests[1]?.messages[0]).toMatchObject({
      attachments: [{ name: 'c.png', data: pngBase64 }],
    });
    rmSync(join(h.root, '.blobs', blobName(h.root)));
    await chat.send('and now?');
    await h.ended(3);
    expect(h.model.requests[2]?.messages[0]).toEqual({
      role: 'user',
      content:
        'what?\n\n[Attachment "c.png" (image/png) is included inline]\n\n[Attachment "c.png" is no longer available]',
    });
    expect(h.events.filter((event) => event.type === 'run.ended').map((event) => event.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    await h.close();
  });

  it('keeps text parts in order after the text', async () => {
    const h = setup([{ text: 'ok' }]);
    const chat = h.runtime.session('s');
    await chat.send({
      text: 'first',
      parts: [
        { type: 'text', text: 'second' },
        { type: 'text', text: 'third' },
      ],
    });
    await settle(h.clock, chat);
    expect(h.model.requests[0]?.messages.at(-1)).toEqual({
      role: 'user',
      content: 'first\n\nsecond\n\nthird',
    });
    await h.close();
  });

  it('merges the parts of collected messages in order into one run', async () => {
    const h = setup([{ text: 'one two three', tokenDelayMs: 10 }, { text: 'done' }]);
    const chat = h.runtime.session('s');
    await chat.send({ id: 'a', text: 'start' });
    const part = (name: string, byte: number) => ({
      type: 'binary' as const,
      data: new Uint8Array([byte]),
      mediaType: 'image/png',
      name,
      mode: 'inline' as const,
    });
    expect(
      (await chat.send({ id: 'b', text: 'B', parts: [part('b.png', 1)] }, { mode: 'collect' })).disposition,
    ).toBe('collected');
    await chat.send(
      { id: 'c', text: 'C', parts: [part('c.png', 2), part('c2.png', 3)] },
      { mode: 'collect' },
    );
    await h.clock.advance(10_000);
    await h.ended(2);
    const second = h.model.requests[1]?.messages.at(-1);
    expect(second?.role).toBe('user');
    expect(second && 'attachments' in second ? second.attachments?.map((a) => [a.name, a.data]) : []).toEqual(
      [
        ['b.png', 'AQ=='],
        ['c.png', 'Ag=='],
        ['c2.png', 'Aw=='],
      ],
    );
    expect(second?.content).toMatch(
      /Queued #1\nB\n\n\[Attachment "b.png".*\n\n---\nQueued #2\nC\n\n\[Attachment "c.png"/s,
    );
    await h.close();
  });

  it('carries the parts of a steer message into the running run', async () => {
    const h = setup([{ text: 'working on it', tokenDelayMs: 10 }, { text: 'noted' }]);
    const chat = h.runtime.session('s');
    await chat.send({ id: 'a', text: 'start' });
    await h.clock.advance(5);
    const steered = await chat.steer({
      id: 'b',
      text: 'also this',
      parts: [
        {
          type: 'binary',
          data: new Uint8Array([7]),
          mediaType: 'application/pdf',
          name: 'x.pdf',
          mode: 'inline',
        },
      ],
    });
    expect(steered.disposition).toBe('steered');
    await h.clock.advance(10_000);
    await h.ended(1);
    const last = h.model.requests.at(-1)?.messages.at(-1);
    expect(last).toMatchObject({
      role: 'user',
      content: 'also this\n\n[Attachment "x.pdf" (application/pdf) is included inline]',
      attachments: [{ kind: 'pdf', name: 'x.pdf', data: 'Bw==' }],
    });
    await h.close();
  });
});

describe('send() refusals with content parts', () => {
  async function expectNothingStored(h: ReturnType<typeof setup>, key: string) {
    expect(await h.ledger.listMessages(key)).toEqual([]);
    expect(await h.ledger.listTurns(key)).toEqual([]);
    expect(h.events.filter((event) => event.sessionKey === key)).toEqual([]);
    expect(filesUnder(h.root)).toEqual([]);
  }

  it('refuses an inline part the model cannot take with unsupported_content, storing nothing', async () => {
    const h = setup([], { inline: ['image'] });
    const chat = h.runtime.session('s');
    const error = await errorOf(
      chat.send({
        text: 'listen',
        parts: [
          {
            type: 'binary',
            data: new Uint8Array([1]),
            mediaType: 'audio/wav',
            name: 'a.wav',
            mode: 'inline',
          },
        ],
      }),
    );
    expect(error).toMatchObject({ code: 'unsupported_content' });
    expect(String((error as Error).message)).toContain('scripted/m does not take audio content inline');
    const unknown = await errorOf(
      chat.send({
        text: 'x',
        parts: [
          { type: 'binary', data: new Uint8Array([1]), mediaType: 'text/csv', name: 'a.csv', mode: 'inline' },
        ],
      }),
    );
    expect(unknown).toMatchObject({ code: 'unsupported_content' });
    await expectNothingStored(h, 's');
    await h.close();
  });

  it('refuses an inline part a fallback model cannot take (override of the capability table)', async () => {
    const root = tempDirectory('workspace');
    const runtime = createRuntime({
      ledger: createMemoryLedger(),
      providers: { a: scriptedModel([]), b: scriptedModel([]) },
      model: { provider: 'a', model: 'vision-1', fallbacks: [{ provider: 'b', model: 'text-only' }] },
      workspace: { root },
      attachments: { inline: { 'b/text-*': [] } },
    });
    const part = {
      type: 'binary' as const,
      data: new Uint8Array([1]),
      mediaType: 'image/png',
      name: 'p.png',
      mode: 'inline' as const,
    };
    const error = await errorOf(runtime.session('s').send({ text: 'x', parts: [part] }));
    expect(error).toMatchObject({
      code: 'unsupported_content',
      details: { provider: 'b', model: 'text-only' },
    });
    expect(filesUnder(root)).toEqual([]);
    await runtime.close();
  });

  it('refuses oversized parts and messages with invalid_input, storing nothing', async () => {
    const h = setup([]);
    const chat = h.runtime.session('s');
    const big = await errorOf(
      chat.send({
        text: 'x',
        parts: [{ type: 'binary', data: new Uint8Array(1001), mediaType: 'image/png', name: 'big.png' }],
      }),
    );
    expect(big).toMatchObject({ code: 'invalid_input' });
    // File parts name files of the session's own directory, relative to it.
    const file = join(h.root, 's', 'inbox', 'big.bin');
    mkdirSync(join(h.root, 's', 'inbox'), { recursive: true });
    writeFileSync(file, new Uint8Array(800));
    const total = await errorOf(
      chat.send({
        text: 'x',
        parts: [
          { type: 'file', path: 'inbox/big.bin' },
          { type: 'file', path: './inbox/big.bin' },
        ],
      }),
    );
    expect(total).toMatchObject({
      code: 'invalid_input',
      message: 'file part "./inbox/big.bin" has 800 bytes, more than the limit of 700',
    });
    rmSync(join(h.root, 's'), { recursive: true });
    await expectNothingStored(h, 's');
    await h.close();
  });

  it('refuses file paths that are absolute, hold .., or lead out of the session directory by a link', async () => {
    const h = setup([]);
    const outside = tempDirectory('outside');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    mkdirSync(join(h.root, 's', 'docs'), { recursive: true });
    writeFileSync(join(h.root, 's', 'docs', 'own.txt'), 'own');
    symlinkSync(outside, join(h.root, 's', 'docs', 'link'));
    symlinkSync(join(outside, 'secret.txt'), join(h.root, 's', 'docs', 'file-link.txt'));
    const chat = h.runtime.session('s');
    const refusals = new Set<string>();
    for (const path of [
      '../secret.txt',
      'docs/../docs/own.txt',
      `${h.root}/s/docs/own.txt`,
      `${h.root}/../x`,
      outside + '/secret.txt',
      'docs/link/secret.txt',
      'docs/file-link.txt',
      'docs',
      'docs/missing.txt',
    ]) {
      const error = await errorOf(chat.send({ text: 'x', parts: [{ type: 'file', path }] }));
      expect(error, path).toMatchObject({ code: 'invalid_input' });
      refusals.add((error as Error).message);
    }
    expect([...refusals]).toEqual([filePartRefusal]);
    expect(await h.ledger.listMessages('s')).toEqual([]);
    expect(filesUnder(join(h.root, '.blobs'))).toEqual([]);
    await h.close();
  });

  it('refuses a message with neither text nor parts, and an empty parts list', async () => {
    const h = setup([]);
    const chat = h.runtime.session('s');
    expect(await errorOf(chat.send({ id: 'x' }))).toMatchObject({ code: 'invalid_input' });
    expect(await errorOf(chat.send({ text: 'x', parts: [] }))).toMatchObject({ code: 'invalid_input' });
    await expectNothingStored(h, 's');
    await h.close();
  });

  it('refuses a url part that is not http(s) with invalid_input', async () => {
    const h = setup([]);
    const chat = h.runtime.session('s');
    for (const url of ['file:///etc/passwd', 'ftp://example.com/x.png', 'not a url']) {
      const error = await errorOf(chat.send({ text: 'x', parts: [{ type: 'url', url }] }));
      expect(error, url).toMatchObject({ code: 'invalid_input' });
    }
    await expectNothingStored(h, 's');
    await h.close();
  });
});

describe('content parts across a restart', () => {
  it('keeps the references of a queued message and the run after the restart still sees its parts', async () => {
    const directory = tempDirectory('restart');
    const root = join(directory, 'workspace');
    const path = join(directory, 'ledger.db');
    const ids = sequentialIds();
    const first = fakeClock({ now: 0 });
    const ledger = createSqliteLedger({ path });
    const before = createRuntime({
      ledger,
      providers: { scripted: scriptedModel([{ hang: true }], { clock: first }) },
      model: { provider: 'scripted', model: 'm' },
      queue: { mode: 'followup', debounceMs: 0 },
      workspace: { root },
      clock: first,
      ids,
      onError: () => undefined,
    });
    const chat = before.session('telegram:7');
    await chat.send({ id: 'a', text: 'busy' });
    const queued = await chat.send({
      id: 'b',
      text: 'look',
      parts: [
        { type: 'binary', data: png, mediaType: 'image/png', name: 'p.png', mode: 'inline' },
        {
          type: 'binary',
          data: new Uint8Array([9, 9]),
          mediaType: 'application/octet-stream',
          name: 'd.bin',
        },
      ],
    });
    expect(queued.disposition).toBe('queued');
    const stored = (await ledger.listMessages('telegram:7')).find((record) => record.messageId === 'b');
    expect(
      stored?.parts?.map((part) => (part.type === 'attachment' ? [part.name, part.mode, part.size] : [])),
    ).toEqual([
      ['p.png', 'inline', png.length],
      ['d.bin', 'file', 2],
    ]);
    await ledger.close(); // the process dies here: the hanging run never ends

    const clock = fakeClock({ now: 10_000 });
    const model = scriptedModel([{ text: 'I see it' }], { clock });
    const after = createRuntime({
      ledger: { path },
      providers: { scripted: model },
      model: { provider: 'scripted', model: 'm' },
      workspace: { root },
      clock,
      ids,
      // The hanging run is closed, not resumed: the first model call is then the queued message's run.
      recovery: { crashedRuns: 'close' },
    });
    const completed = (async () => {
      for await (const event of after.events({}))
        if (event.type === 'run.ended' && event.status === 'completed') return;
    })();
    after.session('telegram:7');
    await clock.advance(10_000);
    await completed;
    const user = model.requests[0]?.messages.at(-1);
    expect(user).toMatchObject({
      role: 'user',
      attachments: [{ kind: 'image', name: 'p.png', data: pngBase64 }],
    });
    expect(user?.content).toMatch(
      /^look\n\n\[Attachment "p.png" \(image\/png\) is included inline\]\n\n\[Attachment "d.bin" \(application\/octet-stream, 2 bytes\) saved at .*\/telegram:7\/[0-9a-f]{16}-d\.bin\]$/,
    );
    const records = await after.session('telegram:7').transcript();
    expect(records.find((turn) => turn.messageIds?.includes('b'))?.attachments).toHaveLength(1);
    const closing = after.close();
    await clock.runAll();
    await closing;
  });
});
