import type { QueuedMessage } from '../actors/session-context.js';
import type { LiveSession } from '../actors/session-registry.js';
import type { Clock } from '../core/clock.js';
import type { Disposition } from '../core/dispositions.js';
import { RuntimeError } from '../core/errors.js';
import type { EventInput } from '../core/events.js';
import type { IdGenerator } from '../core/ids.js';
import type { InboxRecord, Ledger } from '../ledger/ledger.js';
import { summarizeMessage } from '../policies/collect-prompt.js';
import type { Admission } from '../policies/queue-admission.js';
import type { QueueSettings, QueueSettingsInput } from '../policies/queue-settings.js';
import { decide, decideAgain, queuedItem, type Decided } from './admission-decision.js';
import type { InboundMessage } from './inbound-message.js';

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
  /** Where a failed background write (a cap drop's status) is reported. */
  readonly onError?: (error: unknown) => void;
}

/** The oldest queued message, when the admission drops it for the cap (and its summary, when summarized). */
function droppedBy(admission: Admission, queue: readonly QueuedMessage[]) {
  const dropsOldest = 'dropOldest' in admission && admission.dropOldest;
  const dropping = dropsOldest ? queue[0] : undefined;
  const summarize = dropping !== undefined && 'summarize' in admission && admission.summarize;
  return { dropping, summary: summarize ? summarizeMessage(dropping.text) : null };
}

/** Apply the decision to the actor (synchronously) and say what the cap dropped. */
function apply(
  session: LiveSession,
  admission: Admission,
  item: QueuedMessage,
  settings: QueueSettings,
  deps: AdmissionDeps,
  now: number,
  remember: boolean,
) {
  const { actor } = session;
  const { dropping, summary } = droppedBy(admission, actor.getSnapshot().context.queue);
  const cap = { dropOldest: dropping !== undefined, summary, summaryLimit: settings.cap };
  switch (admission.kind) {
    case 'start':
      actor.send({ type: 'START', runId: deps.ids('run'), item, at: now, remember });
      break;
    case 'steer':
      actor.send({
        type: 'STEER',
        message: { messageId: item.messageId, text: item.text },
        at: now,
        remember,
        queued: admission.alsoQueue ? { ...item, mode: 'followup' } : null,
        ...cap,
      });
      break;
    case 'enqueue':
      actor.send({ type: 'ENQUEUE', item, at: now, remember, ...cap });
      break;
    case 'interrupt':
      actor.send({ type: 'INTERRUPT', item, at: now, waitMs: deps.interruptWaitMs, remember });
      break;
    case 'reject':
      break;
  }
  return { dropping, summary };
}

/** The disposition `send()` reports; a message that ended up in the active run at once `started` it. */
function dispositionOf(
  admission: Exclude<Admission, { kind: 'reject' }>,
  inActiveRun: boolean,
): SendResult['disposition'] {
  if (admission.kind === 'steer') return 'steered';
  if (inActiveRun) return 'started';
  switch (admission.kind) {
    case 'start':
      return 'started';
    case 'interrupt':
      return 'interrupted';
    case 'enqueue':
      return admission.disposition;
  }
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
    ...(message.sender === undefined ? {} : { senderId: message.sender.id }),
    ...(channel === undefined ? {} : { channel }),
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
  dropping: QueuedMessage,
  summary: string | null,
): Promise<void> {
  const reason = summary === null ? 'cap_old' : 'cap_summarize';
  deps.emit(session, {
    type: 'message.dropped',
    messageId: dropping.messageId,
    reason,
    ...(summary === null ? {} : { summary }),
  });
  const update = { status: 'dropped' as const, ...(summary === null ? {} : { summary }) };
  return deps.ledger.updateMessages(session.key, [dropping.messageId], update).catch((error: unknown) => {
    // The newcomer is durable and applied: refusing it now would answer its retry `duplicate`.
    deps.onError?.(error);
  });
}

/**
 * Admit one message once its inbox record is durable: decide, write, then apply the decision (taken again on
 * the session as it is then) to the actor and emit its events. A failed write changes nothing. Admissions of one
 * session run one after another in call order, so they keep arrival order and see each other (dedupe).
 */
async function admitNow(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Promise<SendResult> {
  const decided = decide(deps, session, message, options);
  if (!('record' in decided)) return decided;
  const { messageId, settings, now, record } = decided;
  await writeRecord(deps, record);
  const admission = decideAgain(session, settings, record.status === 'steered' ? 'steered' : 'pending');
  const item = queuedItem(message, messageId, settings, now);
  const { dropping, summary } = apply(
    session,
    admission,
    item,
    settings,
    deps,
    now,
    message.id !== undefined,
  );
  const after = session.actor.getSnapshot().context;
  const runId = after.run?.messageIds.includes(messageId) === true ? after.run.runId : undefined;
  const index = after.queue.findIndex((queued) => queued.messageId === messageId);
  const position = index < 0 ? undefined : index + 1;
  const disposition = dispositionOf(admission, runId !== undefined);
  const steeredInto = admission.kind === 'steer' ? after.run?.runId : undefined;
  announce(deps, session, message, decided, {
    disposition,
    position,
    ...(steeredInto === undefined ? {} : { steeredInto }),
  });
  if (dropping !== undefined) await recordDrop(deps, session, dropping, summary);
  const resultRun = admission.kind === 'steer' ? steeredInto : runId;
  return {
    messageId,
    disposition,
    ...(resultRun === undefined ? {} : { runId: resultRun }),
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
