import type { ActiveRun, QueuedMessage } from './session-context.js';
import { admissionFor, statusOf } from './session-admission.js';
import type { LiveSession } from './session-registry.js';
import type { InboxRecord } from '../ledger/index.js';
import { mayControl } from '../policies/index.js';
import { isDuplicate } from '../policies/index.js';
import {
  channelOf,
  resolveQueueSettings,
  type QueueSettings,
  type QueueSettingsInput,
} from '../policies/index.js';
import type { AdmissionDeps, SendResult } from './admit-message.js';
import type { InboundMessage } from './inbound-message.js';
import { checkRole, runAuthorityOf, senderAuthorityOf, type RuntimeAuthority } from './run-authority.js';

/**
 * The sender fields of a queue item: id, name, and the role (the default role filled in once the application
 * configured authority), with `attribute` when the model sees who said what.
 */
function senderFields(message: InboundMessage, authority: RuntimeAuthority): Partial<QueuedMessage> {
  const { sender } = message;
  const role = sender?.role ?? (authority.configured ? authority.defaultRole : undefined);
  return {
    ...(sender === undefined ? {} : { senderId: sender.id }),
    ...(sender?.name === undefined ? {} : { senderName: sender.name }),
    ...(role === undefined ? {} : { role }),
    ...(authority.attribution && role !== undefined ? { attribute: true } : {}),
  };
}

/** The queue item of an admitted message. */
export function queuedItem(
  message: InboundMessage,
  messageId: string,
  settings: QueueSettings,
  now: number,
  authority: RuntimeAuthority,
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
    ...senderFields(message, authority),
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
  /** Its queue item (without stored parts). */
  readonly item: QueuedMessage;
}

/**
 * The settings a message is admitted with once its sender's role is weighed (only with configured authority): a
 * steer or an interrupt the sender may not do to the active run (`authority.control`) becomes a followup.
 */
function settingsFor(
  authority: RuntimeAuthority,
  run: ActiveRun | null,
  message: InboundMessage,
  settings: QueueSettings,
): QueueSettings {
  if (!authority.configured || run === null) return settings;
  const { mode } = settings;
  const action = mode === 'interrupt' ? 'interrupt' : mode.startsWith('steer') ? 'steer' : undefined;
  if (action === undefined) return settings;
  const actor = senderAuthorityOf(authority, message.sender);
  if (mayControl(authority, action, actor, runAuthorityOf(authority, run))) return settings;
  return { ...settings, mode: 'followup' };
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
  checkRole(deps.authority, 'send: sender.role', message.sender?.role);
  const now = deps.clock.now();
  const messageId = message.id ?? deps.ids('msg');
  const before = session.actor.getSnapshot();
  if (message.id !== undefined && isDuplicate(before.context.seen, messageId, now)) {
    deps.emit(session, { type: 'message.duplicate', messageId });
    return { messageId, disposition: 'duplicate' };
  }
  const channel = channelOf(session.key, message.channel);
  const { byChannel } = deps.queueDefaults;
  const resolved = resolveQueueSettings({
    message: options,
    session: before.context.override,
    channel: channel !== undefined && Object.hasOwn(byChannel, channel) ? byChannel[channel] : undefined,
    runtime: deps.queueDefaults,
  });
  const settings = settingsFor(deps.authority, before.context.run, message, resolved);
  // The machine's own decision on the session as it is now: it says which status to record, or refuses.
  const item = queuedItem(message, messageId, settings, now, deps.authority);
  const admission = admissionFor(before, settings, item.role);
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
    ...(item.senderName === undefined ? {} : { senderName: item.senderName }),
    ...(item.role === undefined ? {} : { senderRole: item.role }),
    ...(channel === undefined ? {} : { channel }),
    ...(message.thread === undefined ? {} : { thread: message.thread }),
  };
  return { messageId, now, settings, channel, record, item };
}
