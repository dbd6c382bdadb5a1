import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, createSqliteLedger } from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { type AttachmentRef } from 'agentlanes/attachments';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { filePartRefusal } from '../../src/tools/workspace-paths.js';
import { errorOf } from '../support/error-of.js';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A runtime on a real SQLite ledger with its workspace; `close()` ends it. */
function sqliteRuntime() {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-file-scope-'));
  directories.push(directory);
  const root = join(directory, 'workspace');
  const clock = fakeClock({ now: 0 });
  const ledger = createSqliteLedger({ path: join(directory, 'ledger.db') });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel([{ text: 'one' }, { text: 'two' }, { text: 'three' }], { clock }) },
    model: { provider: 'scripted', model: 'm' },
    queue: { mode: 'followup', debounceMs: 0 },
    workspace: { root },
    clock,
    ids: sequentialIds(),
  });
  return {
    root,
    ledger,
    runtime,
    async close() {
      const closing = runtime.close();
      await clock.runAll();
      await closing;
    },
  };
}

const secret = Buffer.from('{"AccessKeyId":"AKIA-TENANT-A","SecretAccessKey":"tenant-a-secret"}');

/** Tenant A stores its secret; the stored part's reference (its path, its hash). */
async function storeSecretOfA(h: ReturnType<typeof sqliteRuntime>): Promise<AttachmentRef> {
  await h.runtime.session('tenant-a:1').send({
    id: 'a1',
    text: 'my keys',
    parts: [{ type: 'binary', data: secret, mediaType: 'application/json', name: 'creds.json' }],
  });
  const [record] = await h.ledger.listMessages('tenant-a:1');
  const part = record?.parts?.find((one) => one.type === 'attachment');
  if (part === undefined || part.type !== 'attachment') throw new Error('A stored no part');
  return part;
}

describe('file parts: only the session’s own files', () => {
  it('refuses every way to another session’s file or the blob store, one way whether it exists or not', async () => {
    const h = sqliteRuntime();
    const stored = await storeSecretOfA(h);
    const fileName = stored.path.split('/').at(-1) as string;
    // B's own directory, with links planted in it (a tool of B's could do that): to A's file, to A's directory.
    const own = join(h.root, 'web:1');
    mkdirSync(own, { recursive: true });
    symlinkSync(stored.path, join(own, 'link.json'));
    symlinkSync(join(h.root, 'tenant-a:1'), join(own, 'a-dir'));
    symlinkSync(join(h.root, 'tenant-a:1', 'missing.json'), join(own, 'dangling.json'));
    const attempts = (name: string, sha256: string) => [
      `tenant-a:1/${name}`,
      `../tenant-a:1/${name}`,
      `./../tenant-a:1/${name}`,
      join(h.root, 'tenant-a:1', name),
      `.blobs/${sha256}`,
      `../.blobs/${sha256}`,
      join(h.root, '.blobs', sha256),
      `a-dir/${name}`,
    ];
    const existing = [...attempts(fileName, stored.sha256), 'link.json'];
    const missing = [...attempts('0000000000000000-none.json', '0'.repeat(64)), 'dangling.json'];
    for (const path of [...existing, ...missing]) {
      const error = await errorOf(
        h.runtime.session('web:1').send({ text: 'read it', parts: [{ type: 'file', path }] }),
      );
      expect(error, path).toMatchObject({ code: 'invalid_input', message: filePartRefusal });
      expect((error as { details?: unknown }).details, path).toBeUndefined();
    }
    expect(await h.ledger.listMessages('web:1')).toEqual([]);
    expect(readdirSync(own).sort()).toEqual(['a-dir', 'dangling.json', 'link.json']);
    expect(readdirSync(join(h.root, '.blobs'))).toEqual([stored.sha256]);
    await h.close();
  });

  it('refuses a session directory that is itself a link to another session’s', async () => {
    const h = sqliteRuntime();
    const stored = await storeSecretOfA(h);
    symlinkSync(join(h.root, 'tenant-a:1'), join(h.root, 'web:2'));
    const error = await errorOf(
      h.runtime.session('web:2').send({
        text: 'read it',
        parts: [{ type: 'file', path: stored.path.split('/').at(-1) as string }],
      }),
    );
    expect(error).toMatchObject({ code: 'invalid_input', message: filePartRefusal });
    expect(await h.ledger.listMessages('web:2')).toEqual([]);
    await h.close();
  });

  it('still attaches a file of the session’s own directory, by its name there or a path below it', async () => {
    const h = sqliteRuntime();
    const stored = await storeSecretOfA(h);
    const fileName = stored.path.split('/').at(-1) as string;
    const chat = h.runtime.session('tenant-a:1');
    mkdirSync(join(h.root, 'tenant-a:1', 'notes'));
    writeFileSync(join(h.root, 'tenant-a:1', 'notes', 'n.txt'), 'a note');
    const again = await chat.send({
      id: 'a2',
      text: 'again',
      parts: [
        { type: 'file', path: fileName, name: 'creds.json' },
        { type: 'file', path: `./${fileName}`, name: 'same.json' },
        { type: 'file', path: 'notes/n.txt' },
      ],
    });
    expect(again.disposition).not.toBe('rejected');
    const record = (await h.ledger.listMessages('tenant-a:1')).find((one) => one.messageId === 'a2');
    const parts = (record?.parts ?? []).filter((part) => part.type === 'attachment');
    expect(parts.map((part) => [part.source, part.name, part.size])).toEqual([
      ['file', 'creds.json', secret.length],
      ['file', 'same.json', secret.length],
      ['file', 'n.txt', 6],
    ]);
    expect(parts[0]?.sha256).toBe(stored.sha256);
    expect(readFileSync(parts[1]?.path as string)).toEqual(secret);
    expect(existsSync(join(h.root, 'web:1'))).toBe(false);
    await h.close();
  });
});

describe('file parts: a session keyed like the blob store', () => {
  it('gets a directory of its own, so it cannot name the blobs of others', async () => {
    const h = sqliteRuntime();
    const stored = await storeSecretOfA(h);
    const error = await errorOf(
      h.runtime.session('.blobs').send({ text: 'read it', parts: [{ type: 'file', path: stored.sha256 }] }),
    );
    expect(error).toMatchObject({ code: 'invalid_input', message: filePartRefusal });
    await h.close();
  });
});
