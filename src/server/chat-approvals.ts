import { z } from 'zod';
import { RuntimeError } from '../core/index.js';
import type { PendingCall, Runtime, Session } from '../runtime/index.js';

/**
 * A tool part of a message as `useChat` posts it back (`tool-<name>` or `dynamic-tool`): its call, its state, and
 * what the page answered (`approval` from `addToolApprovalResponse`, `output` or `errorText` from `addToolOutput`).
 */
export const chatToolPartSchema = z.looseObject({
  type: z.string(),
  toolCallId: z.string().min(1).max(256),
  state: z.string(),
  approval: z
    .looseObject({
      id: z.string().min(1).max(256),
      approved: z.boolean().optional(),
      reason: z.string().max(4000).optional(),
    })
    .optional(),
  output: z.unknown().optional(),
  errorText: z.string().max(4000).optional(),
});

/** One tool part as posted. */
export type ChatToolPart = z.output<typeof chatToolPartSchema>;

/** What a re-posted assistant message answers for one call that waits. */
export type ChatAnswer =
  | {
      readonly kind: 'approval';
      readonly toolCallId: string;
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    }
  | { readonly kind: 'output'; readonly toolCallId: string; readonly output: unknown }
  | { readonly kind: 'error'; readonly toolCallId: string; readonly errorText: string };

/** The tool parts of a posted message's parts (the others are text, reasoning, steps, files). */
export function toolPartsOf(parts: readonly { readonly type: string }[]): ChatToolPart[] {
  return parts.flatMap((part) => {
    if (!part.type.startsWith('tool-') && part.type !== 'dynamic-tool') return [];
    const parsed = chatToolPartSchema.safeParse(part);
    if (!parsed.success)
      throw new RuntimeError('invalid_input', `a tool part is malformed: ${z.prettifyError(parsed.error)}`);
    return [parsed.data];
  });
}

/** An approval answer: the part's approval must name its own call, as the approval chunk this server sent did. */
function approvalAnswer(part: ChatToolPart, waiting: PendingCall | undefined): ChatAnswer {
  const approval = part.approval;
  if (approval?.approved === undefined) {
    throw new RuntimeError('invalid_input', `tool call "${part.toolCallId}" is answered without a decision`);
  }
  if (waiting === undefined || approval.id !== waiting.approvalId || waiting.kind === 'deferred') {
    throw new RuntimeError('not_found', `no approval "${approval.id}" waits in this session`);
  }
  return {
    kind: 'approval',
    toolCallId: part.toolCallId,
    approvalId: approval.id,
    approved: approval.approved,
    ...(approval.reason === undefined ? {} : { reason: approval.reason }),
  };
}

/**
 * The answers a re-posted assistant message carries, checked against the calls the session's paused run waits
 * for: every `approval-responded` part must name a call of this session waiting for approval (`not_found`
 * otherwise: another session's id, a made-up one, a call already settled); an `output-available` or
 * `output-error` part counts when its call waits for a supplied result (other tool parts are earlier calls the
 * message shows). Nothing is applied here, so a refused post changes nothing.
 */
export function answersOf(parts: readonly ChatToolPart[], pending: readonly PendingCall[]): ChatAnswer[] {
  const waiting = new Map(pending.map((call) => [call.toolCallId, call]));
  const answers: ChatAnswer[] = [];
  for (const part of parts) {
    const call = waiting.get(part.toolCallId);
    if (part.state === 'approval-responded') answers.push(approvalAnswer(part, call));
    else if (call?.kind !== 'deferred') continue;
    else if (part.state === 'output-available')
      answers.push({ kind: 'output', toolCallId: part.toolCallId, output: part.output ?? null });
    else if (part.state === 'output-error')
      answers.push({
        kind: 'error',
        toolCallId: part.toolCallId,
        errorText: part.errorText ?? 'the tool failed',
      });
  }
  if (answers.length === 0) {
    throw new RuntimeError(
      'invalid_input',
      'the last message answers no tool call that waits in this session',
    );
  }
  return answers;
}

/** The calls session `key`'s paused run waits for. */
export async function waitingCallsOf(runtime: Runtime, key: string): Promise<PendingCall[]> {
  return (await runtime.pendingCalls()).filter((call) => call.sessionKey === key);
}

/**
 * Hand each answer to the session: approvals to `approve()`, supplied results to `supplyToolResult()`, each `by`
 * the token's role when it has one.
 */
export async function applyAnswers(
  session: Session,
  answers: readonly ChatAnswer[],
  by: { by?: { role: string } } = {},
): Promise<void> {
  for (const answer of answers) {
    switch (answer.kind) {
      case 'approval':
        await session.approve({
          toolCallId: answer.toolCallId,
          approvalId: answer.approvalId,
          decision: answer.approved ? 'approve' : 'reject',
          ...(answer.reason === undefined || answer.reason === '' ? {} : { message: answer.reason }),
          ...by,
        });
        break;
      case 'output':
        await session.supplyToolResult({ toolCallId: answer.toolCallId, output: answer.output, ...by });
        break;
      case 'error':
        await session.supplyToolResult({
          toolCallId: answer.toolCallId,
          error: answer.errorText || 'the tool failed',
          ...by,
        });
        break;
    }
  }
}
