import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createFilesServer, type FilesServerOptions } from './files-tools.js';

/** A Streamable HTTP MCP server on loopback, one McpServer per session; requests must carry the bearer token. */
export interface HttpMcpServer {
  readonly url: string;
  /** Authorization headers the server received, in order (to show the token was sent). */
  readonly authorizations: string[];
  /** Forget every session, as a restarted server would: requests with an old session id get 404. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

/** Start the files server over Streamable HTTP on 127.0.0.1 (a free port). */
export async function startHttpMcpServer(options: FilesServerOptions): Promise<HttpMcpServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const authorizations: string[] = [];
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    authorizations.push(request.headers.authorization ?? '');
    if (request.headers.authorization !== `Bearer ${options.secret}`) {
      response.writeHead(401).end('unauthorized');
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (transport === undefined && sessionId !== undefined) {
      // As the specification asks: an unknown session is 404, and the client starts a new one.
      const body = { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null };
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (transport === undefined) {
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      const server = createFilesServer(options);
      servers.push(server);
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  };
  const http = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/mcp`,
    authorizations,
    async forgetSessions() {
      sessions.clear();
      await Promise.all(servers.splice(0).map((server) => server.close()));
    },
    async close() {
      await Promise.all(servers.map((server) => server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
