import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';
import { RuntimeError, isRuntimeError, type ErrorCode } from '../core/index.js';

/** Codes only the HTTP edge answers with (no runtime call was made): they complete the runtime's error codes. */
export const httpErrorCodes = ['unauthorized', 'forbidden', 'payload_too_large'] as const;
/** A code of an HTTP error body: a runtime error code, or one of the edge's own. */
export type HttpErrorCode = ErrorCode | (typeof httpErrorCodes)[number];

/** The body of every error answer. */
export interface ErrorBody {
  readonly error: {
    readonly code: HttpErrorCode;
    readonly message: string;
    /** On a `forbidden` answer for a missing capability: the capability the token lacks. */
    readonly capability?: string;
  };
}

/** The statuses of the codes that are not a server failure; every other code answers 500. */
const statusByCode: Partial<Record<ErrorCode, ContentfulStatusCode>> = {
  invalid_input: 400,
  args_invalid: 400,
  args_unresolved: 400,
  plan_cycle: 400,
  tool_denied: 400,
  forbidden: 403,
  not_found: 404,
  rejected_busy: 409,
  queue_full: 409,
  runtime_closed: 503,
  ledger_locked: 503,
  ledger_unavailable: 503,
};

/** The HTTP status a runtime error code maps to. */
export function statusOfCode(code: ErrorCode): ContentfulStatusCode {
  return statusByCode[code] ?? 500;
}

/** An error answer with the `{ error: { code, message } }` body (and `extra` fields beside them). */
export function errorResponse(
  c: Context,
  status: ContentfulStatusCode,
  code: HttpErrorCode,
  message: string,
  extra: { readonly capability?: string } = {},
): Response {
  const body: ErrorBody = { error: { code, message, ...extra } };
  return c.json(body, status);
}

/**
 * The app's error handler: a RuntimeError answers with its code (and mapped status), Hono's own exceptions with
 * their response, anything else with `internal` and no detail (it could hold what a client must not see); what
 * answers 500 is reported to `onError`.
 */
export function createErrorHandler(onError: (error: unknown) => void) {
  return (error: Error, c: Context): Response => {
    if (error instanceof HTTPException) return error.getResponse();
    const code = isRuntimeError(error) ? error.code : 'internal';
    const status = statusOfCode(code);
    if (status === 500) onError(error);
    const message = isRuntimeError(error) && code !== 'internal' ? error.message : 'internal error';
    return errorResponse(c, status, code, message);
  };
}

/**
 * Read the request body as JSON and check it against `schema` (strict schemas: unknown fields are refused). An
 * empty body reads as `{}`. Bad JSON or a body the schema refuses throws `invalid_input`.
 */
export async function readBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch {
      throw new RuntimeError('invalid_input', 'the request body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RuntimeError('invalid_input', `request body: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

/** Check a query parameter (or its absence) against `schema`; `invalid_input` naming it when refused. */
export function readQuery<T>(name: string, value: string | undefined, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RuntimeError('invalid_input', `query ${name}: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
