import type { Admitted } from './session-context.js';
import type { LiveSession } from './session-registry.js';
import type { Clock } from '../core/index.js';
import type { Disposition } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { EventInput } from '../core/index.js';
import type { IdGenerator } from '../core/index.js';
import type { InboxRecord, Ledger } from '../ledger/index.js';
import type { QueueSettingsInput } from '../policies/index.js';
import { decide, type Decided } from './admission-decision.js';
import type { InboundMessage } from './inbound-message.js';
import type { MessageAttachments, StoredParts } from './message-attachments.js';
import type { RuntimeAuthority } from './run-authority.js';

/** What `send()` resolves with. Refusals are answers, not exceptions. */
export interface SendResult {
  readonly messageId: string;
  readonly disposition: Disposition;
  readonly runId?: string;
  /** 1-based position in the queue, for queued, collected and interrupting messages. */
  readonly position?: number;
  /** Why a message was rejected. */
  readonly code?: 'rejected_busy' | 'queue_full';
}

/** What admission needs from the runtime. */
export interface AdmissionDeps {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly ledger: Ledger;
  readonly emit: (session: LiveSession, event: EventInput) => void;
  readonly queueDefaults: QueueSettingsInput & { readonly byChannel: Record<string, QueueSettingsInput> };
  readonly interruptWaitMs: number;
  /** The runtime's roles: a message's role is checked, recorded and weighed against the active run. */
  readonly authority: RuntimeAuthority;
  /** Checks and stores content parts (docs/attachments.md). */
  readonly attachments: MessageAttachments;
  /** Where a failed background write (a cap drop's status) is reported. */
  readonly onError?: (error: unknown) => void;
}

/** Write the inbox record; a failure changes nothing and rejects with `ledger_unavailable`. */
async function writeRecord(deps: AdmissionDeps, record: InboxRecord): Promise<void> {
  try {
    await deps.ledger.appendMessage(record);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RuntimeError(
      'ledger_unavailable',
      `send: message "${record.messageId}" could not be stored, nothing was accepted: ${reason}`,
      { cause: error },
    );
  }
}

/** Store a message's parts before its record is written (none: nothing to store). */
function storeParts(
  deps: AdmissionDeps,
  sessionKey: string,
  message: InboundMessage,
): Promise<StoredParts | undefined> {
  return message.parts === undefined
    ? Promise.resolve(undefined)
    : deps.attachments.store(sessionKey, message.parts);
}

/** The sender fields of `message.received`: id, name and role as the message's queue item holds them. */
function senderOf(decided: Decided): { senderId?: string; senderName?: string; senderRole?: string } {
  const { item } = decided;
  return {
    ...(item.senderId === undefined ? {} : { senderId: item.senderId }),
    ...(item.senderName === undefined ? {} : { senderName: item.senderName }),
    ...(item.role === undefined ? {} : { senderRole: item.role }),
  };
}

/** Emit what became of an admitted message (and of a message the cap dropped for it). */
function announce(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  decided: Decided,
  outcome: { disposition: SendResult['disposition']; position: number | undefined; steeredInto?: string },
): void {
  const { messageId, settings, channel } = decided;
  deps.emit(session, {
    type: 'message.received',
    messageId,
    text: message.text,
    mode: settings.mode,
    disposition: outcome.disposition,
    ...senderOf(decided),
    ...(channel === undefined ? {} : { channel }),
    ...(message.traceparent === undefined ? {} : { traceparent: message.traceparent }),
  });
  if (outcome.disposition === 'steered')
    deps.emit(session, {
      type: 'message.steered',
      messageId,
      ...(outcome.steeredInto === undefined ? {} : { runId: outcome.steeredInto }),
    });
  if (outcome.position !== undefined) {
    deps.emit(session, {
      type: outcome.disposition === 'collected' ? 'message.collected' : 'message.queued',
      messageId,
      position: outcome.position,
    });
  }
}

/** Record and announce the message the cap dropped; a failed write is reported, the admission stands. */
function recordDrop(
  deps: AdmissionDeps,
  session: LiveSession,
  dropped: NonNullable<Admitted['dropped']>,
): Promise<void> {
  const { messageId, summary } = dropped;
  const reason = summary === null ? 'cap_old' : 'cap_summarize';
  deps.emit(session, {
    type: 'message.dropped',
    messageId,
    reason,
    ...(summary === null ? {} : { summary }),
  });
  const update = { status: 'dropped' as const, ...(summary === null ? {} : { summary }) };
  return deps.ledger.updateMessages(session.key, [messageId], update).catch((error: unknown) => {
    // The newcomer is durable and applied: refusing it now would answer its retry `duplicate`.
    deps.onError?.(error);
  });
}

/** What the session machine recorded for the message ADMIT just brought. */
function admittedNow(session: LiveSession, messageId: string): Admitted {
  const { admitted } = session.actor.getSnapshot().context;
  if (admitted?.messageId !== messageId)
    throw new RuntimeError('internal', `send: session "${session.key}" did not admit message "${messageId}"`);
  return admitted;
}

/**
 * Admit one message once its inbox record is durable: decide (to know the status to record, or to refuse), write,
 * then send ADMIT: the session machine decides again on the session as it is then, applies the decision and
 * records the outcome, which is announced. A failed write changes nothing. Admissions of one session run one after
 * another in call order, so they keep arrival order and see each other (dedupe).
 */
async function admitNow(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Promise<SendResult> {
  const decided = decide(deps, session, message, options);
  if (!('record' in decided)) return decided;
  const { messageId, settings, now } = decided;
  // No parts, no extra await: a plain message is written in the stretch that decided it.
  const stored = message.parts === undefined ? undefined : await storeParts(deps, session.key, message);
  const parts = stored === undefined ? {} : { parts: stored.parts };
  const record = { ...decided.record, ...parts };
  await writeRecord(deps, record).catch(async (error: unknown) => {
    await stored?.undo();
    throw error;
  });
  session.actor.send({
    type: 'ADMIT',
    item: { ...decided.item, ...parts },
    settings,
    recorded: record.status,
    at: now,
    remember: message.id !== undefined,
    waitMs: deps.interruptWaitMs,
  });
  const admitted = admittedNow(session, messageId);
  const { disposition, position, runId } = admitted;
  const steeredInto = admitted.kind === 'steer' ? runId : undefined;
  announce(deps, session, message, decided, {
    disposition,
    position,
    ...(steeredInto === undefined ? {} : { steeredInto }),
  });
  if (admitted.dropped !== undefined) await recordDrop(deps, session, admitted.dropped);
  return {
    messageId,
    disposition,
    ...(runId === undefined ? {} : { runId }),
    ...(position === undefined ? {} : { position }),
  };
}

/**
 * Admit one message into a live session: dedupe, resolve its settings, decide by queue mode, make its inbox
 * record durable, then apply the decision to the actor and emit its events. All or nothing: when the record
 * cannot be written, `send()` rejects with `ledger_unavailable` and nothing changed (no run, no event, no dedupe
 * entry). Calls of one session admit in call order.
 */
export function admitMessage(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Promise<SendResult> {
  const previous = session.admitting;
  const admitted =
    previous === undefined
      ? admitNow(deps, session, message, options)
      : previous.then(() => admitNow(deps, session, message, options));
  const settled = admitted.then(
    () => undefined,
    () => undefined,
  );
  session.admitting = settled;
  void settled.then(() => {
    if (session.admitting === settled) session.admitting = undefined;
  });
  return admitted;
}
