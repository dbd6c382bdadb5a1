import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, createRuntime, type RuntimeOptions } from 'agentlanes';
import { fakeClock, scriptedModel } from 'agentlanes/testing';
import { downloadRefusal } from '../../src/tools/workspace-download.js';
import { errorOf } from '../support/error-of.js';

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A loopback "cloud metadata service" that counts what it is asked. */
async function metadataService(): Promise<{ url: string; requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '/');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"AccessKeyId":"AKIA-TEST","SecretAccessKey":"do-not-leak"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

function runtimeWith(attachments: RuntimeOptions['attachments'] = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-fetch-policy-'));
  closers.push(() => rmSync(directory, { recursive: true, force: true }));
  const root = join(directory, 'workspace');
  const clock = fakeClock({ now: 0 });
  const ledger = createMemoryLedger();
  const runtime = createRuntime({
    ledger,
    providers: { scripted: scriptedModel([{ text: 'ok' }], { clock }) },
    model: { provider: 'scripted', model: 'm' },
    workspace: { root },
    attachments,
    clock,
  });
  closers.push(async () => {
    const closing = runtime.close();
    await clock.runAll();
    await closing;
  });
  return { runtime, ledger, root };
}

const credentials = '/latest/meta-data/iam/security-credentials/role';

describe('url parts under the default fetch policy', () => {
  it('refuses a loopback address, and a name resolving to one, before any request: nothing fetched or stored', async () => {
    const metadata = await metadataService();
    const { runtime, ledger, root } = runtimeWith();
    const port = new URL(metadata.url).port;
    for (const url of [`${metadata.url}${credentials}`, `http://localhost:${port}${credentials}`]) {
      const error = await errorOf(
        runtime.session('web:1').send({ text: 'x', parts: [{ type: 'url', url }] }),
      );
      expect(error, url).toMatchObject({ code: 'invalid_input', message: downloadRefusal });
      expect((error as Error).message).not.toContain(port);
    }
    expect(metadata.requests).toEqual([]);
    expect(await ledger.listMessages('web:1')).toEqual([]);
    expect(existsSync(root) ? readdirSync(root, { recursive: true }) : []).toEqual([]);
  });

  it('fetches from the host once attachments.fetch.allowHosts names it', async () => {
    const metadata = await metadataService();
    const { runtime, ledger } = runtimeWith({ fetch: { allowHosts: ['127.0.0.1'] } });
    await runtime
      .session('ops:1')
      .send({ text: 'x', parts: [{ type: 'url', url: `${metadata.url}/doc.json` }] });
    expect(metadata.requests).toEqual(['/doc.json']);
    const [record] = await ledger.listMessages('ops:1');
    expect(record?.parts?.[0]).toMatchObject({ type: 'attachment', source: 'url', name: 'doc.json' });
  });

  it('validates the option: host entries, a boolean, nothing else', () => {
    for (const fetch of [
      { allowHosts: ['a b'] },
      { allowHosts: [''] },
      { allowPrivateNetworks: 'yes' },
      { other: 1 },
    ]) {
      expect(() => runtimeWith({ fetch } as RuntimeOptions['attachments']), JSON.stringify(fetch)).toThrow(
        expect.objectContaining({ code: 'invalid_input' }),
      );
    }
  });
});
