import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Clock } from '../core/index.js';
import type { OpenStreams } from './open-streams.js';
import type { ServerEnv } from './server-env.js';

/** Where to listen. */
export interface ListenOptions {
  /** 0 picks a free port. @default 8787 */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

/** A server that listens: its base URL, and how to stop it. */
export interface ListeningServer {
  /** `http://host:port`, with the port actually bound. */
  readonly url: string;
  readonly port: number;
  /**
   * Stop accepting connections, end every open event stream with a final frame, and resolve once every connection
   * is closed (connections still open after the grace period are cut). The runtime stays open.
   */
  close(): Promise<void>;
}

/** The base URL of a bound address (IPv6 in brackets; a wildcard address as the loopback one). */
function urlOf(address: AddressInfo): string {
  const host =
    address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '[::1]' : address.address;
  return `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${address.port}`;
}

/** The connections of a server and how many responses each has in flight, so `close()` can end the idle ones. */
function trackConnections(server: Server) {
  const inFlight = new Map<Socket, number>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    const before = inFlight.get(socket);
    if (before === undefined) return; // The connection closed already.
    inFlight.set(socket, before + 1);
    response.once('close', () => {
      const count = inFlight.get(socket);
      // A response closes after its connection when the client went away: the connection is gone from the map
      // then, and must not be put back (it would keep the socket and its last response forever).
      if (count === undefined) return;
      const left = count - 1;
      inFlight.set(socket, left);
      // Once closing, a connection whose last response is done is ended (FIN after what was written).
      if (closing && left === 0) socket.end();
    });
  });
  return {
    /** End every connection with no response in flight, and each other one once its responses are done. */
    endIdle(): void {
      closing = true;
      for (const [socket, count] of inFlight) if (count === 0) socket.end();
    },
  };
}

/**
 * Serve the app with `@hono/node-server`. It keeps its default of installing its lighter global Request and
 * Response: Hono's body-limit middleware rebuilds the request with `new Request(request, …)`, which the
 * server's own request objects need.
 */
export function listenOn(
  app: Hono<ServerEnv>,
  parts: { streams: OpenStreams; clock: Clock; shutdownGraceMs: number },
  options: ListenOptions = {},
): Promise<ListeningServer> {
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch: app.fetch,
        port: options.port ?? 8787,
        hostname: options.host ?? '127.0.0.1',
      },
      (info) => {
        server.off('error', reject);
        let closing: Promise<void> | undefined;
        const close = () => (closing ??= closeServer(server as Server, connections, parts));
        resolve({ url: urlOf(info), port: info.port, close });
      },
    );
    const connections = trackConnections(server as Server);
    server.once('error', reject);
  });
}

/** Stop accepting, end the streams and the idle connections, and cut what is still open after the grace period. */
function closeServer(
  server: Server,
  connections: { endIdle(): void },
  parts: { streams: OpenStreams; clock: Clock; shutdownGraceMs: number },
): Promise<void> {
  const { streams, clock } = parts;
  return new Promise((resolve, reject) => {
    const grace = clock.setTimeout(() => server.closeAllConnections(), parts.shutdownGraceMs);
    server.close((error) => {
      clock.clearTimeout(grace);
      if (error === undefined) resolve();
      else reject(error);
    });
    streams.endAll('shutdown');
    connections.endIdle();
  });
}
