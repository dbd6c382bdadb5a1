import type { QueuedMessage } from '../actors/session-context.js';
import type { LiveSession } from '../actors/session-registry.js';
import type { Clock } from '../core/clock.js';
import type { EventInput } from '../core/events.js';
import type { IdGenerator } from '../core/ids.js';
import type { InboxRecord, Ledger } from '../ledger/ledger.js';
import { summarizeMessage } from '../policies/collect-prompt.js';
import { isDuplicate } from '../policies/dedupe.js';
import { decideAdmission, type Admission } from '../policies/queue-admission.js';
import {
  channelOf,
  resolveQueueSettings,
  type QueueSettings,
  type QueueSettingsInput,
} from '../policies/queue-settings.js';
import type { InboundMessage } from './inbound-message.js';
import { activityOf } from './session-activity.js';

/** What `send()` resolves with. Refusals are answers, not exceptions. */
export interface SendResult {
  readonly messageId: string;
  readonly disposition:
    'started' | 'queued' | 'steered' | 'collected' | 'interrupted' | 'rejected' | 'duplicate';
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
}

function queuedItem(
  message: InboundMessage,
  messageId: string,
  settings: QueueSettings,
  now: number,
): QueuedMessage {
  const mode =
    settings.mode === 'collect' ? 'collect' : settings.mode === 'interrupt' ? 'interrupt' : 'followup';
  return {
    messageId,
    text: message.text,
    mode,
    enqueuedAt: now,
    debounceMs: settings.debounceMs,
    maxWaitMs: settings.maxWaitMs,
    ...(message.sender === undefined ? {} : { senderId: message.sender.id }),
    ...(message.channel === undefined ? {} : { channel: message.channel }),
    ...(message.thread === undefined ? {} : { thread: message.thread }),
  };
}

/** Apply the decision to the actor (synchronously) and say what became of the message. */
function apply(
  session: LiveSession,
  admission: Admission,
  item: QueuedMessage,
  deps: AdmissionDeps,
  now: number,
  remember: boolean,
) {
  const { actor } = session;
  const oldest = actor.getSnapshot().context.queue[0];
  const dropping = 'dropOldest' in admission && admission.dropOldest ? oldest : undefined;
  const summary =
    dropping !== undefined && 'summarize' in admission && admission.summarize
      ? summarizeMessage(dropping.text)
      : null;
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
        dropOldest: dropping !== undefined,
        summary,
      });
      break;
    case 'enqueue':
      actor.send({ type: 'ENQUEUE', item, dropOldest: dropping !== undefined, summary, at: now, remember });
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

/**
 * Admit one message into a live session: dedupe, resolve its settings, decide by queue mode, apply to the
 * actor, emit its events and write its inbox record. The decision is taken and applied synchronously, so
 * calls admit in call order; the returned promise resolves once the record is durable.
 */
export async function admitMessage(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Promise<SendResult> {
  const now = deps.clock.now();
  const messageId = message.id ?? deps.ids('msg');
  const before = session.actor.getSnapshot();
  if (message.id !== undefined && isDuplicate(before.context.seen, messageId, now)) {
    deps.emit(session, { type: 'message.duplicate', messageId });
    return { messageId, disposition: 'duplicate' };
  }
  const channel = channelOf(session.key, message.channel);
  const settings = resolveQueueSettings({
    message: options,
    session: session.override,
    channel: channel === undefined ? undefined : deps.queueDefaults.byChannel[channel],
    runtime: deps.queueDefaults,
  });
  const admission = decideAdmission(activityOf(before), before.context.queue.length, settings);
  if (admission.kind === 'reject') {
    deps.emit(session, { type: 'message.rejected', messageId, code: admission.code });
    return { messageId, disposition: 'rejected', code: admission.code };
  }
  const order = before.context.nextOrder;
  const item = queuedItem(message, messageId, settings, now);
  const { dropping, summary } = apply(session, admission, item, deps, now, message.id !== undefined);
  const after = session.actor.getSnapshot().context;
  const runId = after.run?.messageIds.includes(messageId) === true ? after.run.runId : undefined;
  const index = after.queue.findIndex((queued) => queued.messageId === messageId);
  const position = index < 0 ? undefined : index + 1;
  const disposition = dispositionOf(admission, runId !== undefined);
  const record: InboxRecord = {
    sessionKey: session.key,
    messageId,
    order,
    text: message.text,
    mode: settings.mode,
    status: admission.kind === 'steer' && !admission.alsoQueue ? 'steered' : 'pending',
    acceptedAt: now,
    ...(message.sender === undefined ? {} : { senderId: message.sender.id }),
    ...(channel === undefined ? {} : { channel }),
    ...(message.thread === undefined ? {} : { thread: message.thread }),
  };
  const writes = [deps.ledger.appendMessage(record)];
  deps.emit(session, {
    type: 'message.received',
    messageId,
    text: message.text,
    mode: settings.mode,
    disposition,
    ...(message.sender === undefined ? {} : { senderId: message.sender.id }),
    ...(channel === undefined ? {} : { channel }),
  });
  if (dropping !== undefined) {
    const reason = summary === null ? 'cap_old' : 'cap_summarize';
    writes.push(
      deps.ledger.updateMessages(session.key, [dropping.messageId], {
        status: 'dropped',
        ...(summary === null ? {} : { summary }),
      }),
    );
    deps.emit(session, {
      type: 'message.dropped',
      messageId: dropping.messageId,
      reason,
      ...(summary === null ? {} : { summary }),
    });
  }
  if (admission.kind === 'steer')
    deps.emit(session, {
      type: 'message.steered',
      messageId,
      ...(after.run ? { runId: after.run.runId } : {}),
    });
  if (position !== undefined) {
    deps.emit(session, {
      type: disposition === 'collected' ? 'message.collected' : 'message.queued',
      messageId,
      position,
    });
  }
  await Promise.all(writes);
  const steeredRun = admission.kind === 'steer' ? after.run?.runId : runId;
  return {
    messageId,
    disposition,
    ...(steeredRun === undefined ? {} : { runId: steeredRun }),
    ...(position === undefined ? {} : { position }),
  };
}
