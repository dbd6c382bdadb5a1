import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** What the test server reports about a cancelled call, when it runs in the test's own process. */
export interface FilesServerOptions {
  /** The secret the server holds (an API key from its environment or the bearer token it expects). */
  readonly secret: string;
  /** Called when a `slow` call is cancelled by the client (`notifications/cancelled`). */
  readonly onCancelled?: (reason: unknown) => void;
  /** Called when a `slow` call starts. */
  readonly onSlowStarted?: () => void;
}

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** The tools of the test server, on a fresh McpServer (one per session over HTTP). */
export function createFilesServer(options: FilesServerOptions): McpServer {
  const server = new McpServer(
    { name: 'files', version: '1.0.0' },
    { capabilities: { logging: {}, tools: { listChanged: true } } },
  );
  const log = (data: string) =>
    void server.sendLoggingMessage({ level: 'info', data }).catch(() => undefined);
  server.registerTool(
    'read_note',
    {
      description: 'Read a note',
      inputSchema: { path: z.string().min(1) },
      annotations: { readOnlyHint: true },
    },
    ({ path }) => text(`note:${path}`),
  );
  server.registerTool(
    'delete_note',
    {
      description: 'Delete a note',
      inputSchema: { path: z.string() },
      annotations: { destructiveHint: true },
    },
    ({ path }) => text(`deleted:${path}`),
  );
  server.registerTool(
    'slow',
    { description: 'Wait until cancelled', annotations: { readOnlyHint: true } },
    (extra) =>
      new Promise((resolve) => {
        extra.signal.addEventListener('abort', () => {
          log('slow cancelled');
          options.onCancelled?.(extra.signal.reason);
          resolve(text('cancelled'));
        });
        log('slow started');
        options.onSlowStarted?.();
      }),
  );
  server.registerTool(
    'pid',
    { description: 'The server process id', annotations: { readOnlyHint: true } },
    () => text(String(process.pid)),
  );
  server.registerTool(
    'add_tool',
    { description: 'Add a tool', inputSchema: { name: z.string() }, annotations: { destructiveHint: false } },
    ({ name }) => {
      // Registering after connect makes the SDK send notifications/tools/list_changed.
      server.registerTool(name, { description: `Added ${name}`, annotations: { readOnlyHint: true } }, () =>
        text(`${name} ran`),
      );
      return text(`added ${name}`);
    },
  );
  server.registerTool(
    'echo_secret',
    { description: 'Echo the server secret', annotations: { readOnlyHint: true } },
    () => {
      log(`echoing token=${options.secret}`);
      return { content: [{ type: 'text' as const, text: `token=${options.secret}` }] };
    },
  );
  server.registerTool(
    'fail_secret',
    { description: 'Fail with the server secret', annotations: { readOnlyHint: true } },
    () => ({ content: [{ type: 'text' as const, text: `bad token ${options.secret}` }], isError: true }),
  );
  return server;
}
