import type { EventOf, RuntimeEvent } from '../core/index.js';

/**
 * The chunks of the AI SDK UI message stream protocol (v1) this server writes; field names as the AI SDK's
 * `uiMessageChunkSchema` has them.
 */
export type UiMessageChunk =
  | { readonly type: 'start'; readonly messageId?: string }
  | { readonly type: 'start-step' }
  | { readonly type: 'finish-step' }
  | { readonly type: 'finish'; readonly finishReason: 'stop' | 'tool-calls' | 'error' | 'other' }
  | { readonly type: 'abort'; readonly reason?: string }
  | { readonly type: 'error'; readonly errorText: string }
  | { readonly type: 'text-start'; readonly id: string }
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'text-end'; readonly id: string }
  | { readonly type: 'reasoning-start'; readonly id: string }
  | { readonly type: 'reasoning-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'reasoning-end'; readonly id: string }
  | {
      readonly type: 'tool-input-available';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
    }
  | { readonly type: 'tool-approval-request'; readonly approvalId: string; readonly toolCallId: string }
  | { readonly type: 'tool-output-available'; readonly toolCallId: string; readonly output: unknown }
  | { readonly type: 'tool-output-error'; readonly toolCallId: string; readonly errorText: string }
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string };

/** Where one run's translation stands: the open text or reasoning part, and the tool calls already shown. */
export interface UiTranslation {
  readonly runId: string;
  open: { readonly kind: 'text' | 'reasoning'; readonly id: string } | undefined;
  parts: number;
  readonly calls: Set<string>;
  /** Pauses at or before this cursor were answered already (a replay passes them as a step boundary). */
  readonly answeredUpTo: number;
  /** True after a replayed pause closed the step, until the run resumes. */
  stepClosed: boolean;
  /** True once the run ended or paused: the stream is complete. */
  done: boolean;
}

/** Where a translation starts when it continues a message the client already holds. */
export interface TranslationStart {
  /** Parts the message already has: new text and reasoning parts are numbered after them, so no id repeats. */
  readonly parts?: number;
  /** Tool calls the message already shows: their input is not sent again. */
  readonly calls?: Iterable<string>;
  /**
   * The cursor up to which the run was seen running when a replay began: a pause at or before it was answered
   * since, so it closes a step instead of ending the stream. @default -1 (every pause ends the stream)
   */
  readonly answeredUpTo?: number;
}

/** Start translating run `runId` (from scratch, or continuing a message the client holds). */
export function startTranslation(runId: string, start: TranslationStart = {}): UiTranslation {
  return {
    runId,
    open: undefined,
    parts: start.parts ?? 0,
    calls: new Set(start.calls),
    answeredUpTo: start.answeredUpTo ?? -1,
    stepClosed: false,
    done: false,
  };
}

/** Close the open text or reasoning part, if any. */
function closePart(state: UiTranslation): UiMessageChunk[] {
  const open = state.open;
  if (open === undefined) return [];
  state.open = undefined;
  return [{ type: open.kind === 'text' ? 'text-end' : 'reasoning-end', id: open.id }];
}

/** A delta of text or reasoning, opening a part of that kind when the open one is of the other kind or none. */
function delta(state: UiTranslation, kind: 'text' | 'reasoning', text: string): UiMessageChunk[] {
  const chunks: UiMessageChunk[] = [];
  if (state.open?.kind !== kind) {
    chunks.push(...closePart(state));
    state.parts += 1;
    const id = `${state.runId}:${kind}-${state.parts}`;
    state.open = { kind, id };
    chunks.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
  }
  const id = (state.open as { id: string }).id;
  chunks.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', id, delta: text });
  return chunks;
}

/** A tool call the model made: shown once, whether it ran, waits for approval, or waits for a result. */
function toolInput(state: UiTranslation, toolCallId: string, tool: string, args: unknown): UiMessageChunk[] {
  if (state.calls.has(toolCallId)) return [];
  state.calls.add(toolCallId);
  return [
    ...closePart(state),
    { type: 'tool-input-available', toolCallId, toolName: tool, input: args ?? {} },
  ];
}

/** The chunks that end the message: close the open part, then the step and the message. */
function finish(state: UiTranslation, reason: 'stop' | 'tool-calls' | 'error' | 'other'): UiMessageChunk[] {
  state.done = true;
  return [...closePart(state), { type: 'finish-step' }, { type: 'finish', finishReason: reason }];
}

/** A pause: the end of the stream (the page answers, then posts again), or a step boundary when replayed. */
function paused(state: UiTranslation, event: EventOf<'run.paused'>): UiMessageChunk[] {
  if (event.cursor > state.answeredUpTo) return finish(state, 'tool-calls');
  state.stepClosed = true;
  return [...closePart(state), { type: 'finish-step' }];
}

/** A run resumed after a replayed pause opens the next step. */
function resumed(state: UiTranslation): UiMessageChunk[] {
  if (!state.stepClosed) return [];
  state.stepClosed = false;
  return [{ type: 'start-step' }];
}

/** The end of the run, by its status: `stop` when it completed, `abort` when stopped, an error otherwise. */
function ended(state: UiTranslation, event: EventOf<'run.ended'>): UiMessageChunk[] {
  if (event.status === 'completed') return finish(state, 'stop');
  if (event.status === 'aborted' || event.status === 'interrupted') {
    state.done = true;
    return [...closePart(state), { type: 'abort', reason: event.status }];
  }
  const errorText = event.error?.message ?? `the run ended ${event.status}`;
  return [...closePart(state), { type: 'error', errorText }, ...finish(state, 'error')];
}

/** The event types a run's UI message is made of. */
type TranslatedType =
  | 'assistant.delta'
  | 'assistant.reasoning'
  | 'tool.called'
  | 'approval.requested'
  | 'tool.deferred'
  | 'tool.succeeded'
  | 'tool.failed'
  | 'tool.skipped'
  | 'approval.resolved'
  | 'run.paused'
  | 'run.resumed'
  | 'run.ended';

/** What each translated event becomes; other events become nothing. */
const translators: {
  readonly [T in TranslatedType]: (state: UiTranslation, event: EventOf<T>) => UiMessageChunk[];
} = {
  'assistant.delta': (state, event) => delta(state, 'text', event.delta),
  'assistant.reasoning': (state, event) => delta(state, 'reasoning', event.delta),
  'tool.called': (state, event) => toolInput(state, event.toolCallId, event.tool, event.args),
  // AI SDK 6's approval flow: the tool part turns `approval-requested`, and `addToolApprovalResponse` answers it.
  'approval.requested': (state, event) => [
    ...toolInput(state, event.toolCallId, event.tool, event.args),
    {
      type: 'tool-approval-request',
      // The request's own id: the answer `useChat` posts back (`approval: { id }`) is checked against it, so an
      // answer to an earlier request of the call (before a crash left it in doubt) cannot run it again.
      approvalId: event.approvalId ?? event.toolCallId,
      toolCallId: event.toolCallId,
    },
  ],
  'tool.deferred': (state, event) => toolInput(state, event.toolCallId, event.tool, event.args),
  'tool.succeeded': (_state, event) => [
    { type: 'tool-output-available', toolCallId: event.toolCallId, output: event.output ?? null },
  ],
  'tool.failed': (_state, event) => [
    { type: 'tool-output-error', toolCallId: event.toolCallId, errorText: event.error.message },
  ],
  'tool.skipped': (_state, event) => [
    { type: 'tool-output-error', toolCallId: event.toolCallId, errorText: `skipped: ${event.reason}` },
  ],
  'approval.resolved': (_state, event) =>
    event.decision === 'reject' ? [{ type: 'tool-output-denied', toolCallId: event.toolCallId }] : [],
  'run.paused': paused,
  'run.resumed': resumed,
  'run.ended': ended,
};

/** Translate one event of the run into UI message chunks (events of other runs translate to none). */
export function translateEvent(state: UiTranslation, event: RuntimeEvent): UiMessageChunk[] {
  if (event.runId !== state.runId || state.done) return [];
  const translate = translators[event.type as TranslatedType] as
    ((state: UiTranslation, event: RuntimeEvent) => UiMessageChunk[]) | undefined;
  return translate?.(state, event) ?? [];
}
