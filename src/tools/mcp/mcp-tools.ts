import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { maxHostTimerMs, systemClock, type Clock } from '../../core/index.js';
import { isRuntimeError, RuntimeError } from '../../core/index.js';
import { scrubSecrets } from '../../core/index.js';
import { defineTool, type Tool, type ToolContext, type ToolRisk } from '../define-tool.js';
import type { ToolSource } from '../tool-source.js';
import { isIdempotentMcpTool, riskOfMcpTool } from './mcp-annotations.js';
import {
  createMcpConnection,
  transportSecrets,
  type McpConnection,
  type McpEvent,
} from './mcp-connection.js';
import { mcpErrorText, mcpOutput, scrubDeep, type McpCallResult } from './mcp-result.js';
import { parseMcpToolsOptions, type McpToolsConfig, type McpToolsOptions } from './mcp-tools-options.js';

/** An MCP server's tools as agentlanes tools: pass it in createRuntime's `tools`; the list follows the server's. */
export interface McpToolSource extends ToolSource {
  /** The server's name, as given. */
  readonly name: string;
  /** `{ [group]: ['<prefix>*'] }` (or the tool names, without a prefix), to spread into `toolGroups`. */
  readonly groups: Readonly<Record<string, string[]>>;
  /** List the server's tools again (done on its `notifications/tools/list_changed`); resolves once applied. */
  refresh(): Promise<void>;
  /** Stop the server (stdio) or end the session (HTTP); its tools then fail with `tool_failed`. */
  close(): Promise<void>;
}

/** The agentlanes name of an MCP tool: the prefix, then the name with anything outside [a-zA-Z0-9_-] as "_". */
export function mcpToolName(prefix: string, name: string): string {
  return `${prefix}${name}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

/** The zod schema arguments are checked with, from the server's JSON Schema (anything object-like if unreadable). */
function inputSchemaOf(jsonSchema: McpTool['inputSchema']): z.ZodType {
  try {
    return z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read is left to the server, which answers bad arguments with an error result.
    return z.record(z.string(), z.unknown());
  }
}

const isLost = (error: unknown): boolean =>
  !(error instanceof McpError) ||
  error.code === (ErrorCode.ConnectionClosed as number) ||
  error.code === (ErrorCode.RequestTimeout as number);

/** The server no longer knows the HTTP session (it restarted): the request never reached a tool. */
const isSessionGone = (error: unknown): boolean => error instanceof StreamableHTTPError && error.code === 404;

/** One `tools/call` on the live client; a connection that went away is dropped so the next use restarts it. */
async function callOnce(
  connection: McpConnection,
  config: McpToolsConfig,
  name: string,
  args: unknown,
  context: ToolContext,
): Promise<{ readonly result: McpCallResult } | { readonly retry: true }> {
  const client = await connection.client();
  try {
    const result = await client.callTool(
      { name, arguments: (args ?? {}) as Record<string, unknown> },
      undefined,
      // The run's signal carries abort and the tool's timeout; the SDK's own 60 s default must not cut in.
      { signal: context.signal, timeout: maxHostTimerMs },
    );
    return { result: result as McpCallResult };
  } catch (error) {
    if (context.signal.aborted) throw error;
    const message = connection.scrub(error instanceof Error ? error.message : String(error));
    if (!isLost(error)) throw new RuntimeError('tool_failed', `MCP tool "${name}": ${message}`);
    connection.drop(client);
    if (isSessionGone(error)) return { retry: true };
    const next = config.restart.attempts > 0 ? 'it restarts on next use' : 'restarts are off';
    throw new RuntimeError('tool_failed', `MCP server "${config.name}" went away (${message}); ${next}`);
  }
}

/**
 * Call one MCP tool with the run's signal, so an abort or a timeout sends `notifications/cancelled`. An HTTP
 * session the server forgot is opened again once and the call sent again: it never ran.
 */
async function callMcpTool(
  connection: McpConnection,
  config: McpToolsConfig,
  name: string,
  args: unknown,
  context: ToolContext,
): Promise<unknown> {
  let outcome = await callOnce(connection, config, name, args, context);
  if ('retry' in outcome) outcome = await callOnce(connection, config, name, args, context);
  if ('retry' in outcome) {
    throw new RuntimeError('tool_failed', `MCP server "${config.name}" lost the session twice in a row`);
  }
  const { result } = outcome;
  if (result.isError === true) {
    throw new RuntimeError('tool_failed', connection.scrub(`MCP tool "${name}": ${mcpErrorText(result)}`));
  }
  return scrubDeep(mcpOutput(result), transportSecrets(config.transport));
}

function toTool(connection: McpConnection, config: McpToolsConfig, listed: McpTool): Tool {
  const risk: ToolRisk = riskOfMcpTool(listed.name, listed.annotations, {
    overrides: config.risk,
    unannotated: config.defaultRisk,
  });
  const description = listed.description ?? listed.title ?? `The "${listed.name}" tool of ${config.name}`;
  return defineTool({
    name: mcpToolName(config.prefix, listed.name),
    description: connection.scrub(description) || listed.name,
    input: inputSchemaOf(listed.inputSchema),
    inputJsonSchema: listed.inputSchema,
    risk,
    idempotent: isIdempotentMcpTool(listed.annotations),
    ...(config.timeoutMs === undefined ? {} : { timeoutMs: config.timeoutMs }),
    ...(config.retry === undefined ? {} : { retry: config.retry }),
    execute: (args, context) => callMcpTool(connection, config, listed.name, args, context),
  });
}

async function listTools(client: Client): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: maxHostTimerMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** The tools of a listing, by agentlanes name; a later tool whose name clashes after cleaning is left out. */
function toTools(connection: McpConnection, config: McpToolsConfig, listed: readonly McpTool[]): Tool[] {
  const byName = new Map<string, Tool>();
  for (const entry of listed) {
    const tool = toTool(connection, config, entry);
    if (!byName.has(tool.name)) byName.set(tool.name, tool);
  }
  return [...byName.values()];
}

function createSource(config: McpToolsConfig, clock: Clock, onEvent: (event: McpEvent) => void) {
  let tools: readonly Tool[] = [];
  let refreshing: Promise<void> | undefined;
  let again = false;
  const relist = async (): Promise<void> => {
    const listed = await listTools(await connection.client());
    tools = Object.freeze(toTools(connection, config, listed));
    onEvent({ type: 'tools_changed', server: config.name, tools: tools.map((tool) => tool.name) });
  };
  // One listing at a time; a change announced during one lists once more after it.
  const refresh = (): Promise<void> => {
    if (refreshing !== undefined) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        await relist();
      } while (again);
    })().finally(() => (refreshing = undefined));
    return refreshing;
  };
  const report = (error: unknown) =>
    onEvent({ type: 'error', server: config.name, message: connection.scrub(String(error)) });
  const connection = createMcpConnection({
    server: config.name,
    transport: config.transport,
    restart: config.restart,
    clock,
    onToolsChanged: () => void refresh().catch(report),
    onEvent: (event) => {
      onEvent(event);
      // A server started again may offer other tools, and it announces no change for a fresh session.
      if (event.type === 'connected' && event.restart) void refresh().catch(report);
    },
  });
  return { current: () => tools, refresh, close: () => connection.close() };
}

/**
 * Connect to an MCP server and list its tools as agentlanes tools, which go through the runtime's one tool path
 * (policies, groups, approvals, timeouts, retries, abort). Risk comes from the server's annotations, overridable
 * per tool. Rejects with `tool_failed` when the server cannot be started or listed, `invalid_input` on bad options.
 */
export async function mcpTools(options: McpToolsOptions): Promise<McpToolSource> {
  const config = parseMcpToolsOptions(options);
  const onEvent = config.onEvent ?? (() => undefined);
  const source = createSource(config, config.clock ?? systemClock, onEvent);
  try {
    await source.refresh();
  } catch (error) {
    await source.close().catch(() => undefined);
    if (isRuntimeError(error)) throw error;
    const message = error instanceof Error ? error.message : String(error);
    const secrets = transportSecrets(config.transport);
    throw new RuntimeError(
      'tool_failed',
      scrubSecrets(`MCP server "${config.name}" could not list its tools: ${message}`, secrets),
    );
  }
  const members = config.prefix === '' ? source.current().map((tool) => tool.name) : [`${config.prefix}*`];
  return {
    name: config.name,
    groups: { [config.group]: members },
    current: source.current,
    refresh: source.refresh,
    close: source.close,
  };
}
