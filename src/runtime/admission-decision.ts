import type { QueuedMessage } from '../actors/session-context.js';
import { admissionFor, statusOf } from '../actors/session-admission.js';
import type { LiveSession } from '../actors/session-registry.js';
import type { InboxRecord } from '../ledger/index.js';
import { isDuplicate } from '../policies/dedupe.js';
import {
  channelOf,
  resolveQueueSettings,
  type QueueSettings,
  type QueueSettingsInput,
} from '../policies/queue-settings.js';
import type { AdmissionDeps, SendResult } from './admit-message.js';
import type { InboundMessage } from './inbound-message.js';

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

/** What admission resolved for one message before it is durable. */
export interface Decided {
  readonly messageId: string;
  readonly now: number;
  readonly settings: QueueSettings;
  readonly channel: string | undefined;
  readonly record: InboxRecord & { readonly status: 'steered' | 'pending' };
}

/**
 * Dedupe, resolve settings and decide from the session as it is now (the same decision the session machine takes
 * on ADMIT); an answer when refused at once.
 */
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
    session: before.context.override,
    channel: channel !== undefined && Object.hasOwn(byChannel, channel) ? byChannel[channel] : undefined,
    runtime: deps.queueDefaults,
  });
  // The machine's own decision on the session as it is now: it says which status to record, or refuses.
  const admission = admissionFor(before, settings);
  if (admission.kind === 'reject') {
    deps.emit(session, { type: 'message.rejected', messageId, code: admission.code });
    return { messageId, disposition: 'rejected', code: admission.code };
  }
  const record: Decided['record'] = {
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
