import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import { maxDurationMs } from '../core/index.js';

/** How dangerous a tool is: `high` tools need approval before they run. */
export const toolRisks = ['low', 'high'] as const;
/** A tool's risk level. */
export type ToolRisk = (typeof toolRisks)[number];

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** The run's abort signal: aborts on user abort, interrupt, run timeout or the tool's own timeout. */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  readonly sessionKey: string;
  readonly runId: string;
}

/** A tool as the runtime holds it. Without `execute` it is a deferred tool whose result comes from outside. */
export interface Tool<Input = unknown, Output = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<Input>;
  /** The JSON Schema the model is shown, when it comes from elsewhere (an MCP server). @default derived from `input` */
  readonly inputJsonSchema?: Readonly<Record<string, unknown>>;
  readonly risk: ToolRisk;
  /** Milliseconds one attempt (of `execute` or `undo`) may run before it is aborted and fails with `timeout`. */
  readonly timeoutMs?: number;
  /** Validates what `execute` returns; a mismatch is a failed call fed back to the model. */
  readonly output?: z.ZodType;
  /**
   * Retries of an attempt that failed transiently (policies/tool-retry.ts), with exponential backoff and full
   * jitter; for `execute` and `undo` alike, in place of the caller's default (a plan's `retries`).
   */
  readonly retry?: ToolRetry;
  /**
   * Running the call twice does no harm (a read, a lookup): a call cut by a crash before its outcome was recorded
   * runs again on resume. Otherwise such a call is in doubt and waits for an operator.
   */
  readonly idempotent?: boolean;
  // Method syntax on purpose: parameters are then checked bivariantly, so a Tool<{ q: string }> fits a Tool[].
  execute?(args: Input, context: ToolContext): Promise<Output> | Output;
  /**
   * Compensate a call that succeeded (`session.undo(runId)` runs a run's compensations in reverse order). Gets
   * the call's arguments and its output.
   */
  undo?(args: Input, output: Output, context: ToolContext): unknown;
}

/** How a failing tool call is retried: `attempts` more times, waiting `baseMs` × 2^n with full jitter. */
export interface ToolRetry {
  /** @default 2 */
  readonly attempts: number;
  /** @default 200 */
  readonly baseMs: number;
}

/** What `defineTool` takes: a zod input schema, a description and an `execute` (none for deferred tools). */
export interface ToolDefinition<Schema extends z.ZodType, Output> {
  readonly name: string;
  readonly description: string;
  readonly input: Schema;
  /** The JSON Schema the model is shown, as is (an MCP server's); `input` still checks the arguments. @default derived from `input` */
  readonly inputJsonSchema?: Readonly<Record<string, unknown>>;
  /** @default 'low' */
  readonly risk?: ToolRisk;
  /** Milliseconds one attempt may run. @default the caller's (a plan's `timeoutMs`; none for model calls) */
  readonly timeoutMs?: number;
  /** A zod schema the tool's result must match. */
  readonly output?: z.ZodType;
  /** Retry an attempt that failed transiently: `{ attempts?: 2, baseMs?: 200 }`. @default the caller's */
  readonly retry?: { readonly attempts?: number; readonly baseMs?: number };
  /** Safe to run twice: a call a crash cut before its outcome was recorded runs again on resume. @default false */
  readonly idempotent?: boolean;
  readonly execute?: (args: z.output<Schema>, context: ToolContext) => Promise<Output> | Output;
  /** Compensates a call that succeeded: gets its arguments and output. @default no undo */
  readonly undo?: (args: z.output<Schema>, output: Output, context: ToolContext) => unknown;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

const definitionSchema = z.object({
  name: z.string().regex(toolNamePattern, 'tool names are 1-64 letters, digits, "_" or "-"'),
  description: z.string().min(1),
  input: z.custom<z.ZodType>((value) => value instanceof z.ZodType, 'input must be a zod schema'),
  inputJsonSchema: z.record(z.string(), z.unknown()).optional(),
  risk: z.enum(toolRisks).default('low'),
  timeoutMs: z.number().int().positive().max(maxDurationMs).optional(),
  output: z
    .custom<z.ZodType>((value) => value instanceof z.ZodType, 'output must be a zod schema')
    .optional(),
  retry: z
    .object({
      attempts: z.int().min(0).max(10).default(2),
      baseMs: z.int().min(0).max(maxDurationMs).default(200),
    })
    .strict()
    .optional(),
  idempotent: z.boolean().optional(),
  execute: z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function').optional(),
  undo: z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function').optional(),
});

/** Define a tool: the model sees its name, description and the JSON Schema of `input`. */
export function defineTool<Schema extends z.ZodType, Output>(
  definition: ToolDefinition<Schema, Output>,
): Tool<z.output<Schema>, Output> {
  const parsed = definitionSchema.safeParse(definition);
  if (!parsed.success) {
    throw new RuntimeError('invalid_input', `defineTool: ${z.prettifyError(parsed.error)}`);
  }
  if (definition.undo !== undefined && definition.execute === undefined) {
    // A deferred tool's effect happens outside the runtime; so must its compensation.
    throw new RuntimeError('invalid_input', `defineTool: "${definition.name}" has undo but no execute`);
  }
  const retry = parsed.data.retry === undefined ? {} : { retry: parsed.data.retry };
  return Object.freeze({ ...definition, risk: parsed.data.risk, ...retry }) as Tool<z.output<Schema>, Output>;
}
