import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received, with its body parsed as JSON (or the raw text when it is not JSON). */
export interface RecordedRequest {
  readonly method: string;
  /** The path with its query string, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Node's lower-cased request headers. */
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/**
 * One server-sent event. `data` that is not a string is JSON-stringified; a string is sent as-is (split into
 * several `data:` lines if it holds newlines). `{ raw }` is written verbatim, for malformed frames.
 */
export type SseFrame =
  { readonly event?: string; readonly id?: string; readonly data: unknown } | { readonly raw: string };

interface ResponseHead {
  /** @default 200 */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How an SSE response ends after its frames: `close` ends it cleanly, `cut` destroys the socket (a connection
 * lost mid-stream), `hang` keeps it open until the client goes away or the server closes.
 */
export type SseEnding = 'close' | 'cut' | 'hang';

/** A scripted response: a JSON body, a text body, or a stream of server-sent events. */
export type ScriptedResponse =
  | (ResponseHead & { readonly json: unknown })
  | (ResponseHead & { readonly text: string })
  | (ResponseHead & {
      readonly sse: readonly SseFrame[];
      /** @default 'close' */
      readonly end?: SseEnding;
    });

/** A scripted response, or a function choosing one from the request it answers. */
export type ScriptEntry = ScriptedResponse | ((request: RecordedRequest) => ScriptedResponse);

/** A loopback HTTP server answering each request with the next scripted response, in order. */
export interface SseServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received so far, in order. */
  readonly requests: readonly RecordedRequest[];
  /** Queue more responses; a request that finds the queue empty gets a 500 naming the problem. */
  enqueue(...entries: ScriptEntry[]): void;
  /** Close the server, destroying open (e.g. hanging) connections. */
  close(): Promise<void>;
}

/** Encode one frame in the SSE wire format, blank line included. */
export function encodeSseFrame(frame: SseFrame): string {
  if ('raw' in frame) return frame.raw;
  const lines: string[] = [];
  if (frame.event !== undefined) lines.push(`event: ${frame.event}`);
  if (frame.id !== undefined) lines.push(`id: ${frame.id}`);
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  for (const line of data.split('\n')) lines.push(`data: ${line}`);
  return `${lines.join('\n')}\n\n`;
}

/** Start a server on 127.0.0.1 with an OS-chosen port, answering with `script` (more via `enqueue`). */
export async function startSseServer(script: readonly ScriptEntry[] = []): Promise<SseServer> {
  const queue: ScriptEntry[] = [...script];
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const recorded: RecordedRequest = {
        method: request.method ?? 'GET',
        path: request.url ?? '/',
        headers: request.headers,
        body: parseBody(text),
      };
      requests.push(recorded);
      const entry = queue.shift();
      const scripted =
        entry === undefined
          ? { status: 500, json: { error: { message: 'sse-server: no scripted response left' } } }
          : typeof entry === 'function'
            ? entry(recorded)
            : entry;
      respond(response, scripted);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    enqueue: (...entries) => void queue.push(...entries),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // A client that gives up mid-upload: record what arrived.
    request.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function respond(response: ServerResponse, scripted: ScriptedResponse): void {
  const status = scripted.status ?? 200;
  const headers = scripted.headers ?? {};
  if ('json' in scripted) {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(scripted.json));
    return;
  }
  if ('text' in scripted) {
    response.writeHead(status, { 'content-type': 'text/plain', ...headers });
    response.end(scripted.text);
    return;
  }
  response.writeHead(status, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
  // Each frame is its own write (its own HTTP chunk), as a real server flushes them.
  for (const frame of scripted.sse) response.write(encodeSseFrame(frame));
  switch (scripted.end ?? 'close') {
    case 'close':
      response.end();
      return;
    case 'cut':
      // Let the frames reach the socket, then drop the connection without ending the chunked body.
      response.write('', () => response.socket?.destroy());
      return;
    case 'hang':
      return;
  }
}
