import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach } from 'vitest';
import { mcpTools, type McpEvent, type McpToolSource, type McpToolsOptions } from 'agentlanes/mcp';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
const serverScript = fileURLToPath(new URL('./files-server.ts', import.meta.url));

/** The secret the stdio server gets in its environment; it must never show up in a ledger or an event. */
export const filesSecret = 'files-secret-5f2c9d81e7a4b6';

/** The stdio transport of the test server: a real child process started with the SDK's StdioClientTransport. */
export const filesTransport = {
  command: process.execPath,
  args: ['--import', tsx, serverScript],
  env: { FILES_TOKEN: filesSecret },
  stderr: 'ignore' as const,
};

/** A source over the files server, with its connection events recorded and awaitable. */
export interface FilesSource {
  readonly source: McpToolSource;
  readonly events: McpEvent[];
  /** The first event (already seen or to come after `from`) that matches. */
  next(match: (event: McpEvent) => boolean, from?: number): Promise<McpEvent>;
}

const open: McpToolSource[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((source) => source.close()));
});

/** Start the stdio files server as an MCP tool source; closed after the test. */
export async function startFiles(options: Partial<McpToolsOptions> = {}): Promise<FilesSource> {
  const events: McpEvent[] = [];
  const waiters: { match: (event: McpEvent) => boolean; from: number; resolve: (event: McpEvent) => void }[] =
    [];
  const onEvent = (event: McpEvent) => {
    events.push(event);
    for (const waiter of [...waiters]) {
      if (events.length - 1 >= waiter.from && waiter.match(event)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
  };
  const source = await mcpTools({ name: 'files', transport: filesTransport, onEvent, ...options });
  open.push(source);
  const next = (match: (event: McpEvent) => boolean, from = 0) => {
    const seen = events.slice(from).find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<McpEvent>((resolve) => waiters.push({ match, from, resolve }));
  };
  return { source, events, next };
}

/** A log message from the server with this text. */
export const logOf =
  (text: string) =>
  (event: McpEvent): boolean =>
    event.type === 'log' && event.data === text;
