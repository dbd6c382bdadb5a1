import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import { scrubSecrets } from '../../core/index.js';
import { scrubDeep } from './mcp-result.js';

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioTransport {
  readonly command: string;
  readonly args?: readonly string[] | undefined;
  /** The server's environment (with PATH, HOME and the like); its values are treated as secrets. @default {} */
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly cwd?: string | undefined;
  /** Where the server's stderr goes. @default 'inherit' */
  readonly stderr?: 'inherit' | 'ignore' | undefined;
}

/** A server reached over Streamable HTTP; header values are treated as secrets. */
export interface McpHttpTransport {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** How to reach an MCP server. */
export type McpTransport = McpStdioTransport | McpHttpTransport;

/** What happens to an MCP server's connection, for logs and tests; never carries a secret. */
export type McpEvent =
  | { readonly type: 'connected'; readonly server: string; readonly restart: boolean }
  | { readonly type: 'disconnected'; readonly server: string }
  | {
      readonly type: 'start_failed';
      readonly server: string;
      readonly attempt: number;
      readonly message: string;
    }
  | { readonly type: 'tools_changed'; readonly server: string; readonly tools: readonly string[] }
  | { readonly type: 'log'; readonly server: string; readonly level: string; readonly data: unknown }
  | { readonly type: 'error'; readonly server: string; readonly message: string };

/** How a connection behaves: who it is, how it restarts, where its notices go. */
export interface McpConnectionOptions {
  readonly server: string;
  readonly transport: McpTransport;
  /** Connection attempts when a closed server is next used, `baseMs` × 2^n apart; 0: never restart. */
  readonly restart: { readonly attempts: number; readonly baseMs: number };
  readonly clock: Clock;
  readonly onToolsChanged: () => void;
  readonly onEvent: (event: McpEvent) => void;
}

/** One MCP server's client: connected once, restarted on the next use after the server went away. */
export interface McpConnection {
  /** The live client, or a new one when the last closed (bounded attempts); `tool_failed` when none comes up. */
  client(): Promise<Client>;
  /** Forget `client` if it is still the live one (a request found the server gone); the next use restarts. */
  drop(client: Client): void;
  /** Hide the transport's secrets in `text`. */
  scrub(text: string): string;
  close(): Promise<void>;
}

/** The secret values of a transport: environment values and header values. */
export function transportSecrets(transport: McpTransport): string[] {
  const values = 'url' in transport ? transport.headers : transport.env;
  return Object.values(values ?? {});
}

function createTransport(transport: McpTransport): Transport {
  if ('url' in transport) {
    const headers = { ...transport.headers };
    return new StreamableHTTPClientTransport(new URL(transport.url), { requestInit: { headers } });
  }
  return new StdioClientTransport({
    command: transport.command,
    args: [...(transport.args ?? [])],
    env: { ...transport.env },
    ...(transport.cwd === undefined ? {} : { cwd: transport.cwd }),
    stderr: transport.stderr ?? 'inherit',
  });
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Connect a new client over a fresh transport; `onClose` hears when it goes away (not while it starts). */
async function openClient(
  options: McpConnectionOptions,
  scrub: (text: string) => string,
  onClose: (client: Client) => void,
): Promise<Client> {
  const { server, onEvent } = options;
  const client = new Client({ name: 'agentlanes', version: '1' }, { capabilities: {} });
  let gone = false;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => options.onToolsChanged());
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const { level, data } = notification.params;
    onEvent({ type: 'log', server, level, data: scrubDeep(data, transportSecrets(options.transport)) });
  });
  client.onerror = (error) => onEvent({ type: 'error', server, message: scrub(messageOf(error)) });
  client.onclose = () => {
    gone = true;
    onClose(client);
  };
  await client.connect(createTransport(options.transport));
  if (gone) throw new Error('the server closed the connection while it was starting');
  return client;
}

/** Up to `tries` attempts at `open`, `baseMs` × 2^n apart on the clock; stops early once `isClosed()`. */
async function attemptOpen(
  tries: number,
  options: McpConnectionOptions,
  isClosed: () => boolean,
  open: () => Promise<Client>,
  scrub: (text: string) => string,
): Promise<{ readonly client?: Client; readonly error?: unknown }> {
  let error: unknown;
  for (let attempt = 0; attempt < tries && !isClosed(); attempt++) {
    if (attempt > 0) await options.clock.sleep(options.restart.baseMs * 2 ** (attempt - 1));
    if (isClosed()) break;
    try {
      return { client: await open() };
    } catch (caught) {
      error = caught;
      const message = scrub(messageOf(caught));
      options.onEvent({ type: 'start_failed', server: options.server, attempt: attempt + 1, message });
    }
  }
  return { error };
}

const closedError = (server: string) => new RuntimeError('tool_failed', `MCP server "${server}" is closed`);

/** Create the connection; nothing starts until the first `client()`. */
export function createMcpConnection(options: McpConnectionOptions): McpConnection {
  const { server, onEvent } = options;
  const secrets = transportSecrets(options.transport);
  const scrub = (text: string): string => scrubSecrets(text, secrets);
  let live: Client | undefined;
  let starting: Promise<Client> | undefined;
  let started = false;
  let closed = false;

  const open = () =>
    openClient(options, scrub, (client) => {
      if (live !== client) return;
      live = undefined;
      if (!closed) onEvent({ type: 'disconnected', server });
    });

  const start = async (): Promise<Client> => {
    const restart = started;
    const tries = restart ? options.restart.attempts : 1;
    if (tries === 0)
      throw new RuntimeError('tool_failed', `MCP server "${server}" is down and restarts are off`);
    const { client, error } = await attemptOpen(tries, options, () => closed, open, scrub);
    if (client !== undefined && !closed) {
      live = client;
      started = true;
      onEvent({ type: 'connected', server, restart });
      return client;
    }
    await client?.close();
    if (closed) throw closedError(server);
    const what = restart ? `could not be restarted (${tries} attempts)` : 'could not be started';
    throw new RuntimeError('tool_failed', scrub(`MCP server "${server}" ${what}: ${messageOf(error)}`));
  };

  return {
    client: () => {
      if (closed) return Promise.reject(closedError(server));
      if (live !== undefined) return Promise.resolve(live);
      starting ??= start().finally(() => (starting = undefined));
      return starting;
    },
    drop: (client) => {
      if (live !== client) return;
      live = undefined;
      // The client is gone either way; closing it ends a process that hangs instead of dying.
      client.close().catch(() => undefined);
    },
    scrub,
    close: async () => {
      closed = true;
      const client = live;
      live = undefined;
      // A start in flight sees `closed` once its attempt ends and closes what it opened.
      await client?.close();
    },
  };
}
