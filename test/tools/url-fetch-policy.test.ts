import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createDeferred } from '../../src/core/deferred.js';
import {
  checkedLookup,
  downloadPart,
  downloadRefusal,
  maxRedirects,
  type DownloadLimits,
} from '../../src/tools/workspace-download.js';
import { errorOf } from '../support/error-of.js';

const servers: (Server | TcpServer)[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback HTTP server: on `::` (which takes IPv4 too) when the host has IPv6, else on 127.0.0.1. */
async function serve(
  answer: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ port: number; requests: string[]; ipv6: boolean }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '/');
    answer(request, response);
  });
  servers.push(server);
  const listen = (host: string) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve());
    });
  const ipv6 = await listen('::').then(
    () => true,
    () => listen('127.0.0.1').then(() => false),
  );
  return { port: (server.address() as AddressInfo).port, requests, ipv6 };
}

/** The "cloud metadata service": answers credentials to anyone who asks. */
function metadataService() {
  return serve((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"AccessKeyId":"AKIA-TEST","SecretAccessKey":"secret"}');
  });
}

const publicOnly: DownloadLimits = {
  timeoutMs: 5000,
  maxBytes: 1000,
  mediaTypes: ['image/*', 'application/json'],
};
const loopbackAllowed: DownloadLimits = {
  ...publicOnly,
  policy: { allowHosts: ['127.0.0.1'], allowPrivateNetworks: false },
};

/** The refusal's message, after checking it is the one refusal; its reason (details only) for the test's eyes. */
async function refusalOf(promise: Promise<unknown>): Promise<{ message: string; reason: unknown }> {
  const error = await errorOf(promise);
  expect(error).toMatchObject({ code: 'invalid_input', message: downloadRefusal });
  return {
    message: (error as Error).message,
    reason: (error as { details?: { reason?: unknown } }).details?.reason,
  };
}

const credentials = '/latest/meta-data/iam/security-credentials/role';

describe('the fetch policy of url parts: addresses', () => {
  it('refuses loopback by default, as an address, a name, IPv6 and IPv4-mapped IPv6, and never connects', async () => {
    const metadata = await metadataService();
    const hosts = ['127.0.0.1', 'localhost', '127.1.2.3', '0.0.0.0'];
    if (metadata.ipv6) hosts.push('[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[::]');
    for (const host of hosts) {
      const refused = await refusalOf(
        downloadPart(`http://${host}:${metadata.port}${credentials}`, publicOnly, fakeClock({ now: 0 })),
      );
      expect(refused.reason, host).toBe('address');
    }
    expect(metadata.requests).toEqual([]);
  });

  it('refuses the metadata address and the private, shared and multicast ranges without any traffic', async () => {
    // None of these is connected to: the refusal comes before a socket is opened (reason 'address', at once).
    for (const host of [
      '169.254.169.254',
      '10.0.0.1',
      '172.16.0.1',
      '192.168.1.1',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '[fd00:ec2::254]',
      '[fe80::1]',
      '[ff02::1]',
      '[::ffff:169.254.169.254]',
      '[64:ff9b::a9fe:a9fe]',
      '[2002:a9fe:a9fe::1]',
    ]) {
      const refused = await refusalOf(downloadPart(`http://${host}/x`, publicOnly, fakeClock({ now: 0 })));
      expect(refused.reason, host).toBe('address');
    }
  });

  it('fetches from a host allowHosts names, and private networks only with allowPrivateNetworks', async () => {
    const metadata = await metadataService();
    const clock = fakeClock({ now: 0 });
    const fetched = await downloadPart(`http://127.0.0.1:${metadata.port}/x`, loopbackAllowed, clock);
    expect(fetched.mediaType).toBe('application/json');
    const byName = { ...publicOnly, policy: { allowHosts: ['LOCALHOST'], allowPrivateNetworks: false } };
    expect((await downloadPart(`http://localhost:${metadata.port}/y`, byName, clock)).mediaType).toBe(
      'application/json',
    );
    // allowPrivateNetworks opens RFC 1918, CGNAT and unique-local, never loopback.
    const privateNetworks = { ...publicOnly, policy: { allowHosts: [], allowPrivateNetworks: true } };
    const refused = await refusalOf(
      downloadPart(`http://127.0.0.1:${metadata.port}/z`, privateNetworks, clock),
    );
    expect(refused.reason).toBe('address');
    expect(metadata.requests).toEqual(['/x', '/y']);
  });
});

describe('the fetch policy of url parts: redirects', () => {
  it('judges every redirect hop: a 302 from an allowed host to a refused one is refused, nothing fetched', async () => {
    const metadata = await metadataService();
    const targets = [
      `http://localhost:${metadata.port}${credentials}`,
      `http://169.254.169.254${credentials}`,
    ];
    if (metadata.ipv6) targets.push(`http://[::ffff:127.0.0.1]:${metadata.port}${credentials}`);
    for (const target of targets) {
      const allowed = await serve((_request, response) => {
        response.writeHead(302, { location: target });
        response.end();
      });
      const refused = await refusalOf(
        downloadPart(`http://127.0.0.1:${allowed.port}/pic.png`, loopbackAllowed, fakeClock({ now: 0 })),
      );
      expect(refused.reason, target).toBe('address');
      expect(allowed.requests).toEqual(['/pic.png']);
    }
    expect(metadata.requests).toEqual([]);
  });

  it(`follows at most ${maxRedirects} redirects, each re-checked, and relative ones`, async () => {
    const loop = await serve((request, response) => {
      const hop = Number((request.url ?? '/0').slice(1));
      if (hop === 3) {
        response.writeHead(200, { 'content-type': 'image/png' });
        response.end('png');
        return;
      }
      response.writeHead(307, { location: `/${hop + 1}` });
      response.end();
    });
    const clock = fakeClock({ now: 0 });
    expect((await downloadPart(`http://127.0.0.1:${loop.port}/0`, loopbackAllowed, clock)).mediaType).toBe(
      'image/png',
    );
    const endless = await serve((request, response) => {
      response.writeHead(302, { location: `${request.url ?? '/'}x` });
      response.end();
    });
    const refused = await refusalOf(
      downloadPart(`http://127.0.0.1:${endless.port}/`, loopbackAllowed, clock),
    );
    expect(refused.reason).toBe('redirect');
    expect(endless.requests).toHaveLength(maxRedirects + 1);
    const toFile = await serve((_request, response) => {
      response.writeHead(301, { location: 'file:///etc/passwd' });
      response.end();
    });
    expect(
      (await refusalOf(downloadPart(`http://127.0.0.1:${toFile.port}/`, loopbackAllowed, clock))).reason,
    ).toBe('url');
  });
});

/** A port nothing listens on (bound, then closed again). */
async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP server that hangs up on whatever connects (an open port that does not speak HTTP). */
async function hangUp(): Promise<number> {
  const server = createTcpServer((socket: Socket) => socket.destroy());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('the fetch policy of url parts: one refusal for every failure', () => {
  it('gives the same message for a refused address, a closed port, an open one that fails, and the rest', async () => {
    const metadata = await metadataService();
    const answering = await serve((request, response) => {
      if (request.url === '/404') response.writeHead(404, { 'content-type': 'image/png' });
      else if (request.url === '/html') response.writeHead(200, { 'content-type': 'text/html' });
      else if (request.url === '/big') response.writeHead(200, { 'content-type': 'image/png' });
      else response.writeHead(302, {}); // a redirect without a location
      response.end(request.url === '/big' ? Buffer.alloc(2000) : '');
    });
    const clock = fakeClock({ now: 0 });
    const attempts = {
      refused: downloadPart(`http://127.0.0.1:${metadata.port}/`, publicOnly, clock),
      closed: downloadPart(`http://127.0.0.1:${await closedPort()}/`, loopbackAllowed, clock),
      hangsUp: downloadPart(`http://127.0.0.1:${await hangUp()}/`, loopbackAllowed, clock),
      noName: downloadPart('http://no-such-host.invalid/', publicOnly, clock),
      status: downloadPart(`http://127.0.0.1:${answering.port}/404`, loopbackAllowed, clock),
      type: downloadPart(`http://127.0.0.1:${answering.port}/html`, loopbackAllowed, clock),
      big: downloadPart(`http://127.0.0.1:${answering.port}/big`, loopbackAllowed, clock),
      badRedirect: downloadPart(`http://127.0.0.1:${answering.port}/302`, loopbackAllowed, clock),
      scheme: downloadPart('gopher://127.0.0.1/', loopbackAllowed, clock),
    };
    const results = Object.fromEntries(
      await Promise.all(
        Object.entries(attempts).map(async ([name, attempt]) => [name, await refusalOf(attempt)]),
      ),
    ) as Record<string, { message: string; reason: unknown }>;
    expect(new Set(Object.values(results).map((result) => result.message))).toEqual(
      new Set([downloadRefusal]),
    );
    expect(
      Object.fromEntries(Object.entries(results).map(([name, result]) => [name, result.reason])),
    ).toEqual({
      refused: 'address',
      closed: 'network',
      hangsUp: 'network',
      noName: 'network',
      status: 'status',
      type: 'type',
      big: 'size',
      badRedirect: 'redirect',
      scheme: 'url',
    });
    expect(metadata.requests).toEqual([]);
  });
});

describe('the fetch policy of url parts: caps on slow and endless bodies', () => {
  it('cuts a body that drips one byte at a time at the time cap, and closes the connection', async () => {
    const closed = createDeferred<void>();
    const dripping = createDeferred<void>();
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' });
      const drip = setInterval(() => {
        response.write('x');
        dripping.resolve();
      }, 10);
      response.on('close', () => {
        clearInterval(drip);
        closed.resolve();
      });
    });
    const clock = fakeClock({ now: 0 });
    const refusal = refusalOf(
      downloadPart(`http://127.0.0.1:${server.port}/drip.png`, loopbackAllowed, clock),
    );
    await dripping.promise;
    await clock.advance(publicOnly.timeoutMs);
    expect((await refusal).reason).toBe('timeout');
    await closed.promise;
  });

  it('cuts an endless chunked body at the size cap, and closes the connection', async () => {
    const closed = createDeferred<void>();
    const server = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'image/png' }); // chunked, no length
      const pour = (): void => {
        if (response.destroyed) return;
        response.write(Buffer.alloc(256));
        setImmediate(pour);
      };
      response.on('close', () => closed.resolve());
      pour();
    });
    const refused = await refusalOf(
      downloadPart(`http://127.0.0.1:${server.port}/endless.png`, loopbackAllowed, fakeClock({ now: 0 })),
    );
    expect(refused.reason).toBe('size');
    await closed.promise;
  });

  it('cuts a name lookup or a connection that never completes at the time cap', async () => {
    const silent = await serve(() => undefined); // accepts, never answers
    const clock = fakeClock({ now: 0 });
    const refusal = refusalOf(downloadPart(`http://127.0.0.1:${silent.port}/`, loopbackAllowed, clock));
    while (silent.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await clock.advance(publicOnly.timeoutMs);
    expect((await refusal).reason).toBe('timeout');
  });
});

describe('checkedLookup: the address judged is the address connected', () => {
  /** A resolver answering `answers` in turn, counting its calls. */
  function resolver(...answers: LookupAddress[][]) {
    const calls: string[] = [];
    const resolve = (
      hostname: string,
      _options: unknown,
      callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
    ): void => {
      calls.push(hostname);
      callback(null, answers[calls.length - 1] ?? []);
    };
    return { resolve, calls };
  }

  function lookupOnce(
    lookup: ReturnType<typeof checkedLookup>,
    all: boolean,
  ): Promise<{ error: unknown; result: unknown }> {
    return new Promise((done) =>
      lookup('files.example', { all }, (error, address, family) =>
        done({ error, result: all ? address : [address, family] }),
      ),
    );
  }

  it('resolves once and hands the connection exactly the addresses it checked', async () => {
    const answers = resolver([
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ]);
    const lookup = checkedLookup({ allowHosts: [], allowPrivateNetworks: false }, answers.resolve);
    expect(await lookupOnce(lookup, true)).toEqual({
      error: null,
      result: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    // One resolver call per lookup, nothing cached: the second finds no answer left, and is refused.
    expect((await lookupOnce(lookup, false)).error).toBeInstanceOf(Error);
    expect(answers.calls).toEqual(['files.example', 'files.example']);
  });

  it('refuses a name when any address it resolves to is refused (a rebinding answer mixes them)', async () => {
    const answers = resolver(
      [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      [{ address: '::ffff:169.254.169.254', family: 6 }],
      [{ address: '10.1.2.3', family: 4 }],
    );
    const lookup = checkedLookup({ allowHosts: [], allowPrivateNetworks: false }, answers.resolve);
    for (const all of [true, false, true]) {
      const { error, result } = await lookupOnce(lookup, all);
      expect(error).toBeInstanceOf(Error);
      expect(JSON.stringify(result)).not.toMatch(/127|169|10\./);
    }
    const privateOk = checkedLookup(
      { allowHosts: [], allowPrivateNetworks: true },
      resolver([{ address: '10.1.2.3', family: 4 }]).resolve,
    );
    expect(await lookupOnce(privateOk, false)).toEqual({ error: null, result: ['10.1.2.3', 4] });
  });
});
