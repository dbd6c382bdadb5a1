import { z } from 'zod';
import { maxDurationMs, type Clock } from '../../core/index.js';
import { RuntimeError } from '../../core/index.js';
import { toolRisks, type ToolRisk } from '../define-tool.js';
import type { McpEvent, McpTransport } from './mcp-connection.js';

/** What `mcpTools` takes. */
export interface McpToolsOptions {
  /** The server's name, in messages and the default prefix and group: 1-40 letters, digits, "_" or "-". */
  readonly name: string;
  /** `{ command, args?, env?, cwd? }` for a stdio server, `{ url, headers? }` for Streamable HTTP. */
  readonly transport: McpTransport;
  /** Put before each tool's name (the model sees `files_read`). @default `${name}_` */
  readonly prefix?: string;
  /** Risk by the server's tool name, over what its annotations say. @default {} */
  readonly risk?: Readonly<Record<string, ToolRisk>>;
  /** The risk of a tool whose annotations say neither read-only nor (non-)destructive. @default 'high' */
  readonly defaultRisk?: ToolRisk;
  /** The tool group (`group:<group>` in tool policies) that `groups` names. @default name */
  readonly group?: string;
  /** Milliseconds one call may run, for every tool of the server. @default the caller's */
  readonly timeoutMs?: number;
  /** Retries of a failed call, for every tool of the server: `{ attempts?: 2, baseMs?: 200 }`. @default the caller's */
  readonly retry?: { readonly attempts?: number; readonly baseMs?: number };
  /** Connection attempts when a server that went away is next used, `baseMs` × 2^n apart. @default { attempts: 3, baseMs: 500 } */
  readonly restart?: { readonly attempts?: number; readonly baseMs?: number };
  /** The clock restart backoff waits on. @default the system clock */
  readonly clock?: Clock;
  /** Connection notices: connected, disconnected, tools_changed, the server's log messages, errors. */
  readonly onEvent?: (event: McpEvent) => void;
}

const record = z.record(z.string(), z.string());
const namePattern = /^[a-zA-Z0-9_-]{1,40}$/;

const optionsSchema = z
  .object({
    name: z.string().regex(namePattern, 'names are 1-40 letters, digits, "_" or "-"'),
    transport: z.union([
      z
        .object({
          command: z.string().min(1),
          args: z.array(z.string()).optional(),
          env: record.optional(),
          cwd: z.string().optional(),
          stderr: z.enum(['inherit', 'ignore']).optional(),
        })
        .strict(),
      z.object({ url: z.url({ protocol: /^https?$/ }), headers: record.optional() }).strict(),
    ]),
    prefix: z
      .string()
      .regex(/^[a-zA-Z0-9_-]{0,40}$/)
      .optional(),
    risk: z.record(z.string(), z.enum(toolRisks)).default({}),
    defaultRisk: z.enum(toolRisks).default('high'),
    group: z.string().min(1).optional(),
    timeoutMs: z.int().positive().max(maxDurationMs).optional(),
    retry: z
      .object({
        attempts: z.int().min(0).max(10).default(2),
        baseMs: z.int().min(0).max(maxDurationMs).default(200),
      })
      .strict()
      .optional(),
    restart: z
      .object({
        attempts: z.int().min(0).max(10).default(3),
        baseMs: z.int().min(0).max(maxDurationMs).default(500),
      })
      .strict()
      .prefault({}),
    clock: z.custom<Clock>((value) => typeof value === 'object' && value !== null).optional(),
    onEvent: z.custom<(event: McpEvent) => void>((value) => typeof value === 'function').optional(),
  })
  .strict();

/** The options once parsed: defaults filled in. */
export type McpToolsConfig = Omit<z.output<typeof optionsSchema>, 'prefix' | 'group' | 'transport'> & {
  readonly transport: McpTransport;
  readonly prefix: string;
  readonly group: string;
};

/** Parse `mcpTools` options; `invalid_input` naming what is wrong, without echoing secret values. */
export function parseMcpToolsOptions(options: McpToolsOptions): McpToolsConfig {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    // Issues name paths and rules, never the values, so an env or header value cannot leak through here.
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.code}`);
    throw new RuntimeError('invalid_input', `mcpTools: ${issues.join('; ')}`);
  }
  const { prefix, group, ...rest } = parsed.data;
  return { ...rest, prefix: prefix ?? `${rest.name}_`, group: group ?? rest.name };
}
