import { z } from 'zod';
import type { LiveSession } from './session-registry.js';
import { approvalDecisions, approvalMemories, RuntimeError, assertInputBounds } from '../core/index.js';
import type { ApprovalDecision, ToolCallResult } from '../ledger/index.js';
import { settleApproval, settleSupplied, serialize } from '../runner/index.js';
import { previewDecision } from './session-pause.js';
import { describeInvalidArgs, type ToolRegistry } from '../tools/index.js';
import { wellFormed } from './inbound-message.js';
import { assertMayControl, type Controller } from './authority.js';
import { sessionScopeOf, type RuntimeInternals } from './runtime-internals.js';

const approvalSchema = z
  .object({
    toolCallId: wellFormed().min(1),
    decision: z.enum(approvalDecisions),
    args: z.record(z.string(), z.unknown()).optional(),
    message: wellFormed().max(4000).optional(),
    remember: z.enum(approvalMemories).optional(),
    by: z.unknown().optional(),
  })
  .strict()
  .refine((input) => (input.decision === 'edit') === (input.args !== undefined), {
    message: 'args go with decision "edit", and only with it',
    path: ['args'],
  });

/**
 * What `approve()` takes. `edit` runs the call with `args`; `reject` feeds `message` back to the model; `by` names
 * who decides, checked against `authority.control` (`forbidden` when their role may not).
 */
export type ApprovalInput = Omit<z.input<typeof approvalSchema>, 'by'> & { readonly by?: Controller };

const supplySchema = z.union([
  z.object({ toolCallId: wellFormed().min(1), output: z.unknown(), by: z.unknown().optional() }).strict(),
  z
    .object({
      toolCallId: wellFormed().min(1),
      error: z.union([wellFormed().min(1), z.object({ message: wellFormed().min(1) }).strict()]),
      by: z.unknown().optional(),
    })
    .strict(),
]);

/** What `supplyToolResult()` takes: the output of a deferred call, or the error it ended with. */
export type SupplyInput = (
  | { readonly toolCallId: string; readonly output: unknown }
  | {
      readonly toolCallId: string;
      readonly error: string | { readonly message: string };
    }
) & { readonly by?: Controller };

/**
 * Validate a decision before anything reads it: the whole input within the input bounds (nesting, size, no text a
 * ledger cannot store), so a bad one is `invalid_input` and the call stays waiting, never spent.
 */
function parse<T>(schema: z.ZodType<T>, what: string, input: unknown): T {
  assertInputBounds(what, input, what);
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new RuntimeError('invalid_input', `${what}: ${z.prettifyError(parsed.error)}`);
}

/** Check edited arguments against the tool's schema; `args_invalid` (changing nothing) when they do not fit. */
function checkEditedArgs(tools: ToolRegistry, tool: string, args: unknown): void {
  const definition = tools.get(tool);
  if (definition === undefined) return;
  const parsed = definition.input.safeParse(args);
  if (!parsed.success)
    throw new RuntimeError('args_invalid', `approve: ${describeInvalidArgs(tool, parsed.error)}`);
}

/** Decide on a call waiting for approval: record the decision, tell the session (it resumes when nothing waits). */
export async function approveCall(
  internals: RuntimeInternals,
  session: LiveSession,
  input: ApprovalInput,
): Promise<void> {
  const request = parse(approvalSchema, 'approve', input);
  const call = previewDecision(session.actor, {
    type: 'DECIDE',
    toolCallId: request.toolCallId,
    answer: 'approval',
  });
  const action = request.decision === 'edit' ? 'edit' : 'approve';
  assertMayControl(internals.admission.authority, session, action, request.by);
  if (request.decision === 'edit')
    checkEditedArgs(internals.services.toolsFor(session.key), call.tool, request.args);
  const decision: ApprovalDecision = {
    decision: request.decision,
    ...(request.args === undefined ? {} : { args: request.args }),
    ...(request.message === undefined ? {} : { message: request.message }),
    ...(request.remember === undefined ? {} : { remember: request.remember }),
  };
  await settleApproval(sessionScopeOf(internals, session), call, decision);
}

/** The result a supplied output or error gives the model; an output the tool's schema refuses is `invalid_input`. */
function suppliedResult(
  tools: ToolRegistry,
  tool: string,
  input: z.output<typeof supplySchema>,
): ToolCallResult {
  if ('error' in input) {
    const message = typeof input.error === 'string' ? input.error : input.error.message;
    return { content: `Error: ${message}`, isError: true };
  }
  const checked = tools.get(tool)?.output?.safeParse(input.output);
  if (checked !== undefined && !checked.success) {
    throw new RuntimeError(
      'invalid_input',
      `supplyToolResult: the output does not match the output schema of "${tool}"`,
    );
  }
  let content: string;
  try {
    content = serialize(input.output);
  } catch (error) {
    throw new RuntimeError('invalid_input', 'supplyToolResult: output must be JSON-serialisable', {
      cause: error,
    });
  }
  return { content, isError: false };
}

/** Supply the result of a deferred call: record it, tell the session (it resumes when nothing waits). */
export async function supplyResult(
  internals: RuntimeInternals,
  session: LiveSession,
  input: SupplyInput,
): Promise<void> {
  const request = parse(supplySchema, 'supplyToolResult', input);
  const call = previewDecision(session.actor, {
    type: 'DECIDE',
    toolCallId: request.toolCallId,
    answer: 'deferred',
  });
  assertMayControl(internals.admission.authority, session, 'supply', request.by);
  const result = suppliedResult(internals.services.toolsFor(session.key), call.tool, request);
  await settleSupplied(sessionScopeOf(internals, session), call, result);
}
