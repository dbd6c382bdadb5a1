import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryLedger, type Ledger } from 'agentlanes';
import { adminToken, startServer, webToken, type ServerHarness } from './server-harness.js';

let harness: ServerHarness | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function workspaceRoot(): string {
  const directory = mkdtempSync(join(tmpdir(), 'agentlanes-attachment-security-'));
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
  return join(directory, 'workspace');
}

/** A loopback "cloud metadata service" answering credentials, counting the requests it sees. */
async function metadataService(): Promise<{ port: number; requests: string[] }> {
  const requests: string[] = [];
  const server: Server = createHttpServer((request, response) => {
    requests.push(request.url ?? '/');
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"AccessKeyId":"AKIA-TEST","SecretAccessKey":"do-not-leak"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, requests };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Post one message with `parts` to `key` with `token`; the answer's status and error body. */
async function post(key: string, token: string, parts: unknown[]) {
  const response = await (harness as ServerHarness).request(`/v1/sessions/${key}/messages`, {
    method: 'POST',
    token,
    json: { text: 'look at this', parts },
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { code: string; message: string } },
  };
}

/** Every entry under `root` (none when it was never created). */
function entriesUnder(root: string): string[] {
  return existsSync(root) ? readdirSync(root, { recursive: true }).map(String).sort() : [];
}

describe('createServer: attachments of a scoped token', () => {
  it('refuses a url part at a loopback metadata service with 400, one text for every port: nothing fetched or stored', async () => {
    const metadata = await metadataService();
    const ledger: Ledger = createMemoryLedger();
    const root = workspaceRoot();
    harness = await startServer([{ text: 'never' }], { ledger, workspace: { root } });
    const path = '/latest/meta-data/iam/security-credentials/role';
    const targets = [
      `http://127.0.0.1:${metadata.port}${path}`, // open port
      `http://127.0.0.1:${await closedPort()}${path}`, // closed port
      `http://localhost:${metadata.port}${path}`, // a name resolving to loopback
      `http://[::ffff:127.0.0.1]:${metadata.port}${path}`, // IPv4-mapped IPv6
      `http://169.254.169.254${path}`, // the metadata address itself
    ];
    const answers = [];
    for (const url of targets) answers.push(await post('web:1', webToken, [{ type: 'url', url }]));
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error?.code).toBe('invalid_input');
    }
    const messages = new Set(answers.map((answer) => answer.body.error?.message));
    expect(messages.size).toBe(1);
    const [message] = messages;
    expect(message).not.toContain(String(metadata.port));
    expect(message).not.toContain('127.0.0.1');
    expect(metadata.requests).toEqual([]);
    expect(await ledger.listMessages('web:1')).toEqual([]);
    expect(entriesUnder(root)).toEqual([]);
  });

  it('refuses a file part naming another tenant’s file or blob with 400, the same text whether it exists or not', async () => {
    const ledger: Ledger = createMemoryLedger();
    const root = workspaceRoot();
    harness = await startServer([{ text: 'stored' }, { text: 'never' }], { ledger, workspace: { root } });
    const secret = Buffer.from('{"AccessKeyId":"AKIA-CUSTOMER","SecretAccessKey":"customer-secret"}');
    const stored = await post('secret:customer-0', adminToken, [
      { type: 'binary', data: secret.toString('base64'), mediaType: 'application/json', name: 'creds.json' },
    ]);
    expect(stored.status).toBe(202);
    const [record] = await ledger.listMessages('secret:customer-0');
    const part = record?.parts?.[0];
    if (part?.type !== 'attachment') throw new Error('the customer stored no attachment');
    const name = part.path.split('/').at(-1) as string;
    const ways = (file: string, sha256: string) => [
      `secret:customer-0/${file}`,
      `../secret:customer-0/${file}`,
      join(root, 'secret:customer-0', file),
      `.blobs/${sha256}`,
      `../.blobs/${sha256}`,
      join(root, '.blobs', sha256),
    ];
    const existing = ways(name, part.sha256);
    const missing = ways('0000000000000000-nothing.json', 'f'.repeat(64));
    const texts = new Set<string | undefined>();
    for (const path of [...existing, ...missing]) {
      const answer = await post('web:1', webToken, [{ type: 'file', path }]);
      expect(answer.status, path).toBe(400);
      expect(answer.body.error?.code, path).toBe('invalid_input');
      texts.add(answer.body.error?.message);
    }
    expect(texts.size).toBe(1);
    expect([...texts][0]).not.toContain('customer');
    expect(await ledger.listMessages('web:1')).toEqual([]);
    expect(existsSync(join(root, 'web:1'))).toBe(false);
  });
});
