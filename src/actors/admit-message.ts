import type { ActiveRun, QueuedMessage, Admitted, SessionContext } from './session-context.js';
import {
  admissionOf,
  admitInto,
  applyAdmission,
  previewAdmission,
  statusOf,
  type AdmitEvent,
} from './session-admission.js';
import type { LiveSession } from './session-registry.js';
import { RestingSession } from './session-door.js';
import type { InboxRecord, Ledger } from '../ledger/index.js';
import {
  type Admission,
  mayControl,
  isDuplicate,
  channelOf,
  resolveQueueSettings,
  type QueueSettings,
  type QueueSettingsInput,
} from '../policies/index.js';
import { parseInboundMessage, parseQueueSettings, type InboundMessage } from './inbound-message.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';
import { checkRole, runAuthorityOf, senderAuthorityOf, type RuntimeAuthority } from './authority.js';
import {
  type Clock,
  type Disposition,
  RuntimeError,
  type EventInput,
  type IdGenerator,
} from '../core/index.js';
import type { MessageAttachments, StoredParts } from './inbound-message.js';

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
 * What admission decides on: the session's context, and the decision its machine would take on an ADMIT not written
 * yet. A live actor previews it (`previewAdmission`); a resting session (its actor not made yet, session-door.ts) is
 * at `idle`, where the machine's preview is `admissionOf('idle', …)` on that same context.
 */
export interface AdmissionView {
  readonly context: SessionContext;
  readonly preview: (admit: AdmitEvent) => Admission;
}

/** The view admission decides on for `session`: its resting context when it has one, else its actor. */
function viewOf(session: LiveSession, resting: SessionContext | undefined): AdmissionView {
  if (resting !== undefined)
    return { context: resting, preview: (admit) => admissionOf('idle', resting, admit) };
  const { actor } = session;
  return { context: actor.getSnapshot().context, preview: (admit) => previewAdmission(actor, admit) };
}

/**
 * Dedupe, resolve settings and decide from the session as it is now (the same decision the session machine takes
 * on ADMIT); an answer when refused at once. `view` defaults to the session's actor.
 */
export function decide(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
  view: AdmissionView = viewOf(session, undefined),
): Decided | SendResult {
  const role = message.sender?.role;
  if (role !== undefined) checkRole(deps.authority, 'send: sender.role', role);
  const now = deps.clock.now();
  const messageId = message.id ?? deps.ids('msg');
  if (message.id !== undefined && isDuplicate(view.context.seen, messageId, now)) {
    deps.emit(session, { type: 'message.duplicate', messageId });
    return { messageId, disposition: 'duplicate' };
  }
  const channel = channelOf(session.key, message.channel);
  const { byChannel } = deps.queueDefaults;
  const resolved = resolveQueueSettings({
    message: options,
    session: view.context.override,
    channel: channel !== undefined && Object.hasOwn(byChannel, channel) ? byChannel[channel] : undefined,
    runtime: deps.queueDefaults,
  });
  const settings = settingsFor(deps.authority, view.context.run, message, resolved);
  const item = queuedItem(message, messageId, settings, now, deps.authority);
  const admit = {
    type: 'ADMIT',
    item,
    settings,
    at: now,
    remember: false,
    waitMs: deps.interruptWaitMs,
  } as const;
  const admission = view.preview(admit);
  if (admission.kind === 'reject') {
    deps.emit(session, { type: 'message.rejected', messageId, code: admission.code });
    return { messageId, disposition: 'rejected', code: admission.code };
  }
  const record: Decided['record'] = {
    sessionKey: session.key,
    messageId,
    order: view.context.nextOrder,
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
  admitted: Admitted,
): void {
  const { messageId, settings, channel } = decided;
  const { disposition, position, runId } = admitted;
  const outcome = { disposition, position, steeredInto: admitted.kind === 'steer' ? runId : undefined };
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

/**
 * Apply a durable message's admission to a resting session it was decided on (`resting`, its context): the outcome
 * is the one its machine reaches on this ADMIT (the same pure `applyAdmission` its `admit` action applies, on the
 * same context), with the id of the run it starts chosen here; the actor starts after the acknowledgement and
 * learns the message then, once (session-door.ts, `RestingSession`). When the actor was made while the record was
 * written (something read it), or the message does not start a run, the machine decides now, as for any session.
 */
function admitResting(
  deps: AdmissionDeps,
  session: LiveSession,
  resting: SessionContext,
  admit: AdmitEvent,
  announce: (admitted: Admitted) => void,
): Admitted {
  if (!(session instanceof RestingSession) || session.restingContext() !== resting)
    return admitInto(session.actor, admit, announce);
  // The run id is drawn only when the message starts a run (the same draw the machine's admit makes).
  let runId: string | undefined;
  const { outcome } = applyAdmission(resting, admit, 'idle', () => (runId ??= deps.ids('run')));
  if (outcome.kind !== 'start' || runId === undefined) return admitInto(session.actor, admit, announce);
  session.admitOnStart({ ...admit, runId });
  announce(outcome);
  return outcome;
}

/**
 * Admit one message into a live session: dedupe, resolve its settings, preview the machine's decision (to know the
 * status to record, or to refuse), make its inbox record durable, then send ADMIT: the machine decides on the
 * session as it is then, applies the decision and emits the outcome, which is announced. All or nothing: when the
 * record cannot be written, `send()` rejects with `ledger_unavailable` and nothing changed (no run, no event, no
 * dedupe entry). Admissions hold the session's door, so they run one after another in call order, keep arrival
 * order and see each other (dedupe). A resting session (hydrated at rest, its actor not made yet) is decided on its
 * loaded context, and its actor learns the message after the acknowledgement (`admitResting`).
 */
async function admitNow(
  deps: AdmissionDeps,
  session: LiveSession,
  message: InboundMessage,
  options: QueueSettingsInput,
): Promise<SendResult> {
  const resting = session instanceof RestingSession ? session.restingContext() : undefined;
  const decided = decide(deps, session, message, options, viewOf(session, resting));
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
  const admit: AdmitEvent = {
    type: 'ADMIT',
    item: { ...decided.item, ...parts },
    settings,
    recorded: record.status,
    at: now,
    remember: message.id !== undefined,
    waitMs: deps.interruptWaitMs,
  };
  const told = (admitted: Admitted): void => announce(deps, session, message, decided, admitted);
  const admitted =
    resting === undefined
      ? admitInto(session.actor, admit, told)
      : admitResting(deps, session, resting, admit, told);
  const { disposition, position, runId } = admitted;
  if (admitted.dropped !== undefined) await recordDrop(deps, session, admitted.dropped);
  return {
    messageId,
    disposition,
    ...(runId === undefined ? {} : { runId }),
    ...(position === undefined ? {} : { position }),
  };
}

/**
 * `send()` of session `key`, the one way a message comes in from a handle: check the message and its options, then
 * admit it through the session's gate, in call order (hydrating the session first when it is not live).
 */
export async function sendMessage(
  internals: RuntimeInternals,
  key: string,
  input: unknown,
  options: unknown,
): Promise<SendResult> {
  assertOpen(internals);
  const message = parseInboundMessage(input);
  const settings = parseQueueSettings('send: options', options);
  // A message without parts has none to check.
  if (message.parts !== undefined) internals.admission.attachments.check(message.parts);
  // An admission holds the session's door: the calls after it wait until its message applied (or failed).
  return internals.withSession(key, (live) => admitNow(internals.admission, live, message, settings), {
    holds: true,
  });
}
