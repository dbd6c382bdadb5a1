import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import { errorOf } from '../support/error-of.js';
import { downloadPart, downloadRefusal } from '../../src/tools/workspace-download.js';
import {
  filePartRefusal,
  relativeSegments,
  resolveInsideRoot,
  safeFileName,
  sessionDirectoryName,
} from '../../src/tools/workspace-paths.js';
import { createWorkspaceStore } from '../../src/tools/workspace-store.js';

const directories: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
function tempDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-workspace-'));
  directories.push(directory);
  return directory;
}

/** A loopback HTTP server answering every request with `answer`. */
async function serve(answer: (response: ServerResponse, path: string) => void): Promise<string> {
  const server = createServer((request, response) => answer(response, request.url ?? '/'));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Expect `promise` to reject with the one download refusal, failed for `reason` (in its details only). */
async function expectRefusal(promise: Promise<unknown>, reason: string): Promise<void> {
  const error = await errorOf(promise);
  expect(error).toMatchObject({ code: 'invalid_input', message: downloadRefusal, details: { reason } });
}

/** The loopback servers of these tests are named in `allowHosts`: the documented way to fetch from one. */
const limits = {
  timeoutMs: 1000,
  maxBytes: 100,
  mediaTypes: ['image/*', 'application/pdf'],
  policy: { allowHosts: ['127.0.0.1'], allowPrivateNetworks: false },
};

describe('downloadPart', () => {
  it('downloads the body and its media type from a loopback server its host is allowed', async () => {
    const url = await serve((response) => {
      response.writeHead(200, { 'content-type': 'image/png; charset=binary' });
      response.end(Buffer.from([1, 2, 3]));
    });
    const download = await downloadPart(`${url}/a.png`, limits, fakeClock({ now: 0 }));
    expect(download).toEqual({ bytes: Buffer.from([1, 2, 3]), mediaType: 'image/png' });
  });

  it('refuses schemes other than http(s), and user info in the address', async () => {
    for (const address of [
      'file:///etc/passwd',
      'data:image/png;base64,AA==',
      'ftp://x/y',
      'http://u:p@x/y',
    ]) {
      await expectRefusal(downloadPart(address, limits, fakeClock({ now: 0 })), 'url');
    }
  });

  it('refuses a content type outside the allowed ones or other than the declared one, and an error status', async () => {
    const url = await serve((response, path) => {
      response.writeHead(path === '/missing' ? 404 : 200, {
        'content-type': path === '/png' ? 'image/png' : 'text/html',
      });
      response.end('<html>');
    });
    const clock = fakeClock({ now: 0 });
    await expectRefusal(downloadPart(`${url}/page`, limits, clock), 'type');
    await expectRefusal(
      downloadPart(`${url}/png`, { ...limits, mediaType: 'application/pdf' }, clock),
      'type',
    );
    await expectRefusal(downloadPart(`${url}/missing`, limits, clock), 'status');
  });

  it('says nothing of the address in its errors (no token, no query, no host)', async () => {
    const url = await serve((response) => {
      response.writeHead(404, { 'content-type': 'image/png' });
      response.end();
    });
    const error = await errorOf(
      downloadPart(`${url}/file/bot123:SECRET/photos/p.png?sig=SECRET2`, limits, fakeClock({ now: 0 })),
    );
    expect((error as Error).message).toBe(downloadRefusal);
    const shown = JSON.stringify({ ...(error as object), message: (error as Error).message });
    expect(shown).not.toContain('SECRET');
    expect(shown).not.toContain('127.0.0.1');
    expect((error as Error).cause).toBeUndefined();
  });

  it('refuses a body over the size cap, whether declared or streamed', async () => {
    const url = await serve((response, path) => {
      if (path === '/declared') {
        response.writeHead(200, { 'content-type': 'image/png', 'content-length': '101' });
        response.end(Buffer.alloc(101));
        return;
      }
      response.writeHead(200, { 'content-type': 'image/png' }); // chunked: no length up front
      response.write(Buffer.alloc(60));
      response.end(Buffer.alloc(60));
    });
    const clock = fakeClock({ now: 0 });
    await expectRefusal(downloadPart(`${url}/declared`, limits, clock), 'size');
    await expectRefusal(downloadPart(`${url}/streamed`, limits, clock), 'size');
  });

  it('gives up after the timeout on the injected clock', async () => {
    const asked = createDeferred<void>();
    const url = await serve(() => asked.resolve()); // never answers
    const clock = fakeClock({ now: 0 });
    const refusal = expectRefusal(downloadPart(`${url}/slow.png`, limits, clock), 'timeout');
    await asked.promise;
    await clock.advance(1000);
    await refusal;
  });
});

describe('resolveInsideRoot', () => {
  it('resolves relative and absolute paths inside the root to their real path', async () => {
    const root = tempDirectory();
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.txt'), 'a');
    symlinkSync(join(root, 'docs'), join(root, 'inner-link'));
    expect(await resolveInsideRoot(root, 'docs/a.txt')).toBe(join(root, 'docs', 'a.txt'));
    expect(await resolveInsideRoot(root, join(root, 'docs/./a.txt'))).toBe(join(root, 'docs', 'a.txt'));
    expect(await resolveInsideRoot(root, 'inner-link/a.txt')).toBe(join(root, 'docs', 'a.txt'));
  });

  it('refuses .. escapes and symbolic links that point out of the root', async () => {
    const root = tempDirectory();
    const outside = tempDirectory();
    writeFileSync(join(outside, 'secret'), 's');
    symlinkSync(outside, join(root, 'out'));
    symlinkSync(join(outside, 'secret'), join(root, 'secret-link'));
    for (const path of [
      '..',
      '../x',
      'docs/../../x',
      join(outside, 'secret'),
      'out/secret',
      'secret-link',
      'out/new',
    ]) {
      await expect(resolveInsideRoot(root, path), path).rejects.toMatchObject({ code: 'invalid_input' });
    }
  });
});

describe('sessionDirectoryName and safeFileName', () => {
  it('keeps a session key readable and never lets it leave the root', () => {
    expect(sessionDirectoryName('telegram:12345')).toBe('telegram:12345');
    expect(sessionDirectoryName('../etc')).toBe('..%2Fetc');
    expect(sessionDirectoryName('..')).toBe('%2E%2E');
    expect(sessionDirectoryName('.blobs')).toBe('%2Eblobs'); // never the blob store
    expect(sessionDirectoryName('.BLOBS')).toBe('%2EBLOBS');
    expect(sessionDirectoryName('.blobs2')).toBe('.blobs2');
    expect(sessionDirectoryName('a b/ü')).toBe('a%20b%2F%C3%BC');
    expect(sessionDirectoryName('x'.repeat(512)).length).toBeLessThanOrEqual(200);
  });

  it('keeps only the last path segment of a name, without control characters', () => {
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('a\nb.png')).toBe('a_b.png');
    expect(safeFileName('..')).toBe('attachment');
    expect(safeFileName(undefined, 'download')).toBe('download');
  });
});

describe('createWorkspaceStore', () => {
  it('stores equal bytes once and links them into each session; undo removes only what it created', async () => {
    const root = tempDirectory();
    const store = createWorkspaceStore(root);
    const bytes = Buffer.from('hello');
    const first = await store.store('s1', bytes, 'a.txt');
    const second = await store.store('s2', bytes, 'b.txt');
    expect(first.sha256).toBe('2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824');
    expect(readdirSync(join(root, '.blobs'))).toEqual([first.sha256]);
    expect(statSync(join(root, '.blobs', first.sha256)).nlink).toBe(3);
    expect(Buffer.from(await store.read(first.sha256)).toString()).toBe('hello');
    await first.undo();
    expect(readdirSync(join(root, '.blobs'))).toEqual([first.sha256]); // s2 still links it
    await second.undo();
    expect(readdirSync(join(root, 's2'))).toEqual([]);
    const fresh = await store.store('s3', Buffer.from('new'), 'n.txt');
    await fresh.undo();
    expect(readdirSync(join(root, '.blobs'))).toEqual([first.sha256]);
    await expect(store.read('f'.repeat(64))).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses to write through a session directory that was replaced by a link out of the root', async () => {
    const root = tempDirectory();
    const outside = tempDirectory();
    mkdirSync(root, { recursive: true });
    symlinkSync(outside, join(root, 'evil'));
    await expect(createWorkspaceStore(root).store('evil', Buffer.from('x'), 'x')).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect(readdirSync(outside)).toEqual([]);
    expect(readdirSync(join(root, '.blobs'))).toEqual([]);
  });
});

describe('openSessionFile (what a file part may name)', () => {
  it('takes plain relative paths only', () => {
    expect(relativeSegments('a.txt')).toEqual(['a.txt']);
    expect(relativeSegments('./docs//a.txt')).toEqual(['docs', 'a.txt']);
    for (const path of [
      '',
      '.',
      './',
      '/etc/passwd',
      '\\\\server\\share',
      'C:\\x',
      '..',
      'a/../b',
      'a\\..\\b',
      'a\0b',
    ])
      expect(relativeSegments(path), JSON.stringify(path)).toBeUndefined();
  });

  it("opens a file of the session's own directory, and refuses a directory, a pipe and another session's file alike", async () => {
    const root = tempDirectory();
    const store = createWorkspaceStore(root);
    const mine = await store.store('me', Buffer.from('mine'), 'a.txt');
    const theirs = await store.store('them', Buffer.from('theirs'), 'b.txt');
    const file = await store.openSessionFile('me', mine.path.split('/').at(-1) as string);
    expect(file.size).toBe(4);
    expect(Buffer.from(await file.read()).toString()).toBe('mine');
    await file.close();
    mkdirSync(join(root, 'me', 'sub'));
    execFileSync('mkfifo', [join(root, 'me', 'pipe')]);
    for (const path of [
      'sub',
      'pipe',
      `../them/${theirs.path.split('/').at(-1) as string}`,
      theirs.path,
      'nothing',
    ])
      await expect(store.openSessionFile('me', path), path).rejects.toMatchObject({
        code: 'invalid_input',
        message: filePartRefusal,
      });
    await expect(store.openSessionFile('nobody', 'a.txt')).rejects.toMatchObject({
      message: filePartRefusal,
    });
  });
});
