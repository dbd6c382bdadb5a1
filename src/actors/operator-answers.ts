import { type WaitingCall, answerApproval, answerSupplied, serialize } from '../runner/index.js';
import type { DecideEvent, CallAnswered, DecisionRefused } from './session-context.js';
import type { SessionActor } from './session-machine.js';
import { decisionOn } from './session-pause.js';
import {
  RuntimeError,
  type PauseState,
  approvalDecisions,
  approvalMemories,
  assertInputBounds,
} from '../core/index.js';
import type { ApprovalDecision, ToolCallResult } from '../ledger/index.js';
import { z } from 'zod';
import type { LiveSession } from './session-registry.js';
import { describeInvalidArgs, type ToolRegistry } from '../tools/index.js';
import { wellFormed } from './inbound-message.js';
import { assertMayControl, type Controller } from './authority.js';
import { sessionScopeOf, type RuntimeInternals } from './runtime-internals.js';

/**
 * The session machine's verdict on an answer before anything is checked or written (authority, edited arguments):
 * the transition its DECIDE would take now, selected with xstate's `getTransitionData` (guards run, nothing
 * changes). Returns the waiting call it would answer; throws the refusal's `RuntimeError`.
 */
export function previewDecision(actor: SessionActor, event: DecideEvent): WaitingCall {
  const snapshot = actor.getSnapshot();
  const answers = actor.logic
    .getTransitionData(snapshot, event)
    .some((selected) => selected.actions.some((action) => actionType(action) === 'answerCall'));
  const verdict = decisionOn(snapshot.context, event);
  if (answers && verdict.ok) return verdict.call;
  throw refusalOf(snapshot.context.sessionKey, event, verdict.ok ? undefined : verdict);
}

/**
 * Send an answer's DECIDE and take what the machine emits for it: the pause state after the call was answered (absent:
 * nothing waits and the run goes on), or the refusal, thrown (nothing changed).
 */
export function decideInto(actor: SessionActor, event: DecideEvent): { readonly state?: PauseState } {
  let outcome: CallAnswered | DecisionRefused | undefined;
  const settled = actor.on('call.answered', (emitted) => {
    if (emitted.call.toolCallId === event.toolCallId) outcome = emitted;
  });
  const refused = actor.on('decision.refused', (emitted) => {
    if (emitted.toolCallId === event.toolCallId) outcome = emitted;
  });
  try {
    actor.send(event);
  } finally {
    settled.unsubscribe();
    refused.unsubscribe();
  }
  if (outcome?.type === 'call.answered') return outcome.state === undefined ? {} : { state: outcome.state };
  throw refusalOf(actor.getSnapshot().context.sessionKey, event, outcome);
}

/** The error an answer the machine refused ends with (`internal` when it neither settled nor refused it). */
function refusalOf(
  sessionKey: string,
  event: DecideEvent,
  refusal: { readonly code: 'not_found' | 'invalid_input'; readonly message: string } | undefined,
): RuntimeError {
  if (refusal !== undefined) return new RuntimeError(refusal.code, refusal.message);
  return new RuntimeError('internal', `session "${sessionKey}" made no decision on "${event.toolCallId}"`);
}

/** The type of a transition's action as xstate hands it back (a name, or an object with one). */
function actionType(action: unknown): unknown {
  if (typeof action === 'string') return action;
  return typeof action === 'object' && action !== null && 'type' in action ? action.type : undefined;
}

/** The request an answer names (`approvalId` of the event it answers); optional. */
const approvalIdField = wellFormed().min(1).optional();

const approvalSchema = z
  .object({
    toolCallId: wellFormed().min(1),
    approvalId: approvalIdField,
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
 * who decides, checked against `authority.control` (`forbidden` when their role may not). `approvalId` (from the
 * `approval.requested` event) makes the answer count for that request only: once a crash left the call in doubt
 * and it is asked again, an answer to the first request is refused (`not_found`) instead of running it twice.
 */
export type ApprovalInput = Omit<z.input<typeof approvalSchema>, 'by'> & { readonly by?: Controller };

const supplySchema = z.union([
  z
    .object({
      toolCallId: wellFormed().min(1),
      approvalId: approvalIdField,
      output: z.unknown(),
      by: z.unknown().optional(),
    })
    .strict(),
  z
    .object({
      toolCallId: wellFormed().min(1),
      approvalId: approvalIdField,
      error: z.union([wellFormed().min(1), z.object({ message: wellFormed().min(1) }).strict()]),
      by: z.unknown().optional(),
    })
    .strict(),
]);

/**
 * What `supplyToolResult()` takes: the output of a deferred call, or the error it ended with; `approvalId` names the
 * request it answers (a call in doubt), refused once the call was asked again.
 */
export type SupplyInput = (
  | { readonly toolCallId: string; readonly output: unknown }
  | {
      readonly toolCallId: string;
      readonly error: string | { readonly message: string };
    }
) & { readonly approvalId?: string | undefined; readonly by?: Controller };

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

/** The DECIDE an answer sends: the call it names and, when it names one, the request it answers. */
function decideEvent(
  request: { readonly toolCallId: string; readonly approvalId?: string | undefined },
  answer: DecideEvent['answer'],
): DecideEvent {
  const { toolCallId, approvalId } = request;
  return { type: 'DECIDE', toolCallId, answer, ...(approvalId === undefined ? {} : { approvalId }) };
}

/** Check edited arguments against the tool's schema; `args_invalid` (changing nothing) when they do not fit. */
function checkEditedArgs(tools: ToolRegistry, tool: string, args: unknown): void {
  const definition = tools.get(tool);
  if (definition === undefined) return;
  const parsed = definition.input.safeParse(args);
  if (!parsed.success)
    throw new RuntimeError('args_invalid', `approve: ${describeInvalidArgs(tool, parsed.error)}`);
}

/** Decide on a call waiting for approval: the session answers it (resuming when nothing waits), then it is recorded. */
export async function approveCall(
  internals: RuntimeInternals,
  session: LiveSession,
  input: ApprovalInput,
): Promise<void> {
  const request = parse(approvalSchema, 'approve', input);
  const call = previewDecision(session.actor, decideEvent(request, 'approval'));
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
  await answerApproval(sessionScopeOf(internals, session), call, decision);
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

/** Supply a deferred call's result: the session answers it (resuming when nothing waits), then it is recorded. */
export async function supplyResult(
  internals: RuntimeInternals,
  session: LiveSession,
  input: SupplyInput,
): Promise<void> {
  const request = parse(supplySchema, 'supplyToolResult', input);
  const call = previewDecision(session.actor, decideEvent(request, 'deferred'));
  assertMayControl(internals.admission.authority, session, 'supply', request.by);
  const result = suppliedResult(internals.services.toolsFor(session.key), call.tool, request);
  await answerSupplied(sessionScopeOf(internals, session), call, result);
}
