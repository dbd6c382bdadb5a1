import type { QueuedMessage } from '../actors/session-context.js';
import type { LiveSession } from '../actors/session-registry.js';
import type { InboxRecord } from '../ledger/ledger.js';
import { isDuplicate } from '../policies/dedupe.js';
import { decideAdmission, type Admission } from '../policies/queue-admission.js';
import {
  channelOf,
  resolveQueueSettings,
  type QueueSettings,
  type QueueSettingsInput,
} from '../policies/queue-settings.js';
import type { AdmissionDeps, SendResult } from './admit-message.js';
import type { InboundMessage } from './inbound-message.js';
import { activityOf } from './session-activity.js';

/** The queue item of an admitted message. */
export function queuedItem(
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

/** The inbox status a decision records: a message steered into the run (and not also queued) is `steered`. */
export function statusOf(admission: Admission): 'steered' | 'pending' {
  return admission.kind === 'steer' && !admission.alsoQueue ? 'steered' : 'pending';
}

/**
 * The decision taken again once the record is durable (the session may have moved on while it was written),
 * fitted to what the record says: a durable message is never refused any more, and a message recorded as
 * `pending` is queued rather than only steered (a steer that no turn admits would be run again after a
 * restart). A record written `steered` that ends up queued is fine: the ledger runs steered messages no turn
 * admitted.
 */
export function decideAgain(
  session: LiveSession,
  settings: QueueSettings,
  recorded: 'steered' | 'pending',
): Exclude<Admission, { kind: 'reject' }> {
  const snapshot = session.actor.getSnapshot();
  const activity = activityOf(snapshot);
  const length = snapshot.context.queue.length;
  let admission = decideAdmission(activity, length, settings);
  if (recorded === 'pending' && statusOf(admission) === 'steered')
    admission = decideAdmission(activity, length, { ...settings, mode: 'followup' });
  if (admission.kind !== 'reject') return admission;
  const disposition = settings.mode === 'collect' ? 'collected' : 'queued';
  return { kind: 'enqueue', disposition, dropOldest: false, summarize: false };
}

/** What admission resolved for one message before it is durable. */
export interface Decided {
  readonly messageId: string;
  readonly now: number;
  readonly settings: QueueSettings;
  readonly channel: string | undefined;
  readonly record: InboxRecord;
}

/** Dedupe, resolve settings and decide from the session as it is now; an answer when refused at once. */
export function decide(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Decided | SendResult {
  const now = deps.clock.now();
  const messageId = message.id ?? deps.ids('msg');
  const before = session.actor.getSnapshot();
  if (message.id !== undefined && isDuplicate(before.context.seen, messageId, now)) {
    deps.emit(session, { type: 'message.duplicate', messageId });
    return { messageId, disposition: 'duplicate' };
  }
  const channel = channelOf(session.key, message.channel);
  const { byChannel } = deps.queueDefaults;
  const settings = resolveQueueSettings({
    message: options,
    session: session.override,
    channel: channel !== undefined && Object.hasOwn(byChannel, channel) ? byChannel[channel] : undefined,
    runtime: deps.queueDefaults,
  });
  const admission = decideAdmission(activityOf(before), before.context.queue.length, settings);
  if (admission.kind === 'reject') {
    deps.emit(session, { type: 'message.rejected', messageId, code: admission.code });
    return { messageId, disposition: 'rejected', code: admission.code };
  }
  const record: InboxRecord = {
    sessionKey: session.key,
    messageId,
    order: before.context.nextOrder,
    text: message.text,
    mode: settings.mode,
    status: statusOf(admission),
    acceptedAt: now,
    ...(message.sender === undefined ? {} : { senderId: message.sender.id }),
    ...(channel === undefined ? {} : { channel }),
    ...(message.thread === undefined ? {} : { thread: message.thread }),
  };
  return { messageId, now, settings, channel, record };
}
