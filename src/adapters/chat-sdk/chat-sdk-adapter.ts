import type { Adapter, Author, Chat, Message, SlashCommandEvent, Thread } from 'chat';
import { systemClock, type Clock } from '../../core/index.js';
import type { ConsumerStore, DeliveryStore } from '../../ledger/index.js';
import type { QueueSettingsInput } from '../../policies/index.js';
import type { Runtime } from '../../runtime/index.js';
import { startReplyDelivery, type ReplyDelivery } from '../delivery/reply-delivery.js';
import { createSecretScrubber, type SecretScrubber } from '../delivery/secret-scrubber.js';
import { createInboundDedupe, type InboundDedupe } from '../delivery/inbound-dedupe.js';
import { stopRun } from '../delivery/stop-command.js';
import { partsOfMessage } from './chat-attachments.js';
import { roleOfAuthor, type ChatPlace, type ChatRoleOptions } from './chat-roles.js';
import { adapterOf, createChatTarget, type ReplyFormat } from './chat-target.js';

/** Options of `connectChat`. */
export interface ChatSdkAdapterOptions {
  readonly runtime: Runtime;
  /**
   * The ledger the runtime was created with: deliveries are recorded there with the consumer's position, and the
   * messages handled (a redelivery within `redeliveryWindowMs` is ignored, across restarts).
   */
  readonly ledger: DeliveryStore & ConsumerStore;
  /** The durable consumer that delivers replies (one per Chat). @default 'chat-sdk' */
  readonly consumer?: string;
  /** Queue settings for every inbound message (e.g. `{ mode: 'steer' }`). @default the runtime's */
  readonly sendOptions?: QueueSettingsInput;
  /** The command that aborts the thread's run (when the sender's role may: `authority.control.stop`). @default 'stop' */
  readonly stopCommand?: string;
  /**
   * How each message's author gets a role: `roleOf` from the author data, `owner` in a direct message, else the
   * runtime's default role; `false` sends no role. @default {}
   */
  readonly roles?: ChatRoleOptions | false;
  /** What the thread is told when a sender's role may not stop its run; null: nothing. @default stopRefusedNotice */
  readonly stopRefusedNotice?: string | null;
  /**
   * How long a handled message is remembered, so a platform redelivering it (Telegram retries for hours) is not
   * answered twice. @default 48 hours
   */
  readonly redeliveryWindowMs?: number;
  /** Stream a run's reply into one message by editing it; false: each block is its own message. @default true */
  readonly stream?: boolean;
  /**
   * The longest a message grows, measured on the text as the platform adapter sends it (Telegram: MarkdownV2,
   * escapes included): a streamed message starts a new one past it, a longer block is split. @default 4000
   */
  readonly editLimit?: number;
  /** Replies as markdown (rendered per platform) or as raw text. @default 'markdown' */
  readonly format?: ReplyFormat;
  /** How photos, files, voice notes and videos reach the model (content parts). @default 'file' */
  readonly attachmentMode?: 'file' | 'inline';
  /** The text a thread gets when its run crashed mid-reply. */
  readonly interruptedNotice?: string;
  /** The text a thread gets when its run failed or timed out; null: nothing. */
  readonly failureNotice?: string | null;
  readonly clock?: Clock;
  /** Background failures, with the platform adapters' secrets (bot tokens) masked. @default console.error */
  readonly onError?: (error: unknown) => void;
  /**
   * More secrets to mask in what is logged, rethrown or recorded. The platform adapters' own tokens (e.g. the
   * Telegram adapter's bot token) are learnt from the adapters, and any `bot<id>:<secret>` URL segment is masked.
   */
  readonly secrets?: readonly string[];
}

/** A Chat connected to a runtime. */
export interface ChatSdkConnection {
  /** The reply delivery loop (a durable consumer). */
  readonly delivery: ReplyDelivery;
}

/** The session of a thread: `<adapter>:<thread id>` (Chat SDK thread ids already start with the adapter's name). */
export function chatSessionKey(thread: Pick<Thread, 'id' | 'adapter'>): string {
  const prefix = `${thread.adapter.name}:`;
  return thread.id.startsWith(prefix) ? thread.id : `${prefix}${thread.id}`;
}

/** What the handlers share: the options, the secrets scrubber and the scrubbed failure handler. */
interface ChatContext {
  readonly options: ChatSdkAdapterOptions;
  readonly scrubber: SecretScrubber;
  /** The messages handled, kept in the ledger (the runtime's own dedupe holds 5 minutes). */
  readonly dedupe: InboundDedupe;
  readonly onError: (error: unknown) => void;
  /** Remember a platform adapter's secrets (its bot token) for scrubbing. */
  readonly learn: (adapter: Adapter) => void;
}

/** Property names under which platform adapters keep their credentials (Telegram's `staticBotToken`, ...). */
const secretPropertyPattern = /token|secret|password|apikey/i;

/** The credentials a platform adapter holds as own string properties (the Telegram adapter's bot token). */
function secretsOfAdapter(adapter: Adapter): string[] {
  return Object.entries(adapter as unknown as Record<string, unknown>)
    .filter(([name, value]) => secretPropertyPattern.test(name) && typeof value === 'string')
    .map(([, value]) => value as string);
}

/** True when `text` is the stop command (`/stop`, or `/stop@botname`). */
function isStopCommand(text: string, command: string): boolean {
  return new RegExp(`^/${command}(@\\w+)?$`).test(text);
}

/** The sender of a message or command: the author's id and name, and its role when roles are on. */
async function senderOf(
  options: ChatSdkAdapterOptions,
  author: Author,
  place: ChatPlace,
): Promise<{ id: string; name: string; role?: string }> {
  const found = options.roles === false ? undefined : await roleOfAuthor(options.roles ?? {}, author, place);
  // A role the runtime does not know (its roles are the application's own) is left out: the default role, never more.
  const role = found !== undefined && options.runtime.authority.roles.includes(found) ? found : undefined;
  const name = author.fullName || author.userName;
  return { id: author.userId, name, ...(role === undefined ? {} : { role }) };
}

/** Feed one message to its thread's session; the stop command aborts the run instead. */
async function receive(context: ChatContext, thread: Thread, message: Message): Promise<void> {
  if (message.author.isMe) return;
  const { options } = context;
  const sessionKey = chatSessionKey(thread);
  if (await context.dedupe.seen(sessionKey, message.id)) return;
  const session = options.runtime.session(sessionKey);
  const command = options.stopCommand ?? 'stop';
  const text = message.text.trim();
  const place = { adapter: thread.adapter.name, channelId: thread.channelId, isDM: thread.isDM };
  const sender = await senderOf(options, message.author, place);
  if (isStopCommand(text, command)) {
    await stopRun(options, session, sender, (notice) => thread.post(notice));
    await context.dedupe.remember(sessionKey, message.id);
    return;
  }
  const { parts, missing } = await partsOfMessage(message, options.attachmentMode ?? 'file', context.onError);
  // Not dropped in silence: the agent hears of a file it could not get.
  const said = [text, ...missing.map((name) => `[${name} could not be downloaded]`)].join('\n').trim();
  if (said === '' && parts.length === 0) return;
  await session.send(
    {
      id: message.id,
      ...(said === '' ? {} : { text: said }),
      ...(parts.length === 0 ? {} : { parts }),
      channel: thread.adapter.name,
      sender,
    },
    options.sendOptions,
  );
  await context.dedupe.remember(sessionKey, message.id);
}

/** The platform's id of the message that carried a command, as the Chat SDK names messages (`<chat>:<id>`). */
function commandMessageId(raw: unknown): string | undefined {
  const message = raw as { message_id?: unknown; chat?: { id?: unknown } } | undefined;
  if (typeof message?.message_id !== 'number' || typeof message.chat?.id !== 'number') return undefined;
  return `${message.chat.id}:${message.message_id}`;
}

/**
 * A command as the platform tags it (Telegram's `bot_command` entity): the Chat SDK hands it to slash-command
 * handlers only, never as a message. The stop command aborts the run; any other goes to the session as text.
 */
async function receiveCommand(context: ChatContext, event: SlashCommandEvent): Promise<void> {
  if (event.user.isMe) return;
  const { options } = context;
  const sessionKey = chatSessionKey({ id: event.channel.id, adapter: event.adapter });
  const id = commandMessageId(event.raw);
  if (id !== undefined && (await context.dedupe.seen(sessionKey, id))) return;
  const remember = async (): Promise<void> => {
    if (id !== undefined) await context.dedupe.remember(sessionKey, id);
  };
  const session = options.runtime.session(sessionKey);
  const stopCommand = options.stopCommand ?? 'stop';
  const place = { adapter: event.adapter.name, channelId: event.channel.id, isDM: event.channel.isDM };
  const sender = await senderOf(options, event.user, place);
  if (event.command === `/${stopCommand}`) {
    await stopRun(options, session, sender, (notice) => event.channel.post(notice));
    await remember();
    return;
  }
  await session.send(
    {
      ...(id === undefined ? {} : { id }),
      text: `${event.command} ${event.text}`.trim(),
      channel: event.adapter.name,
      sender,
    },
    options.sendOptions,
  );
  await remember();
}

/** A handler whose failures leave it scrubbed of secrets (the Chat SDK logs what a handler throws). */
function scrubbing<Arguments extends unknown[]>(
  context: ChatContext,
  handler: (...values: Arguments) => Promise<void>,
): (...values: Arguments) => Promise<void> {
  return async (...values) => {
    try {
      await handler(...values);
    } catch (error) {
      throw context.scrubber.error(error);
    }
  };
}

/** The handlers' shared context: the secrets learnt from the platform adapters and the durable dedupe. */
function createChatContext(options: ChatSdkAdapterOptions): { context: ChatContext; secrets: Set<string> } {
  const secrets = new Set(options.secrets ?? []);
  const learnt = new WeakSet<Adapter>();
  const scrubber = createSecretScrubber(() => secrets);
  const context: ChatContext = {
    options,
    scrubber,
    dedupe: createInboundDedupe({
      store: options.ledger,
      consumer: options.consumer ?? 'chat-sdk',
      clock: options.clock ?? systemClock,
      ...(options.redeliveryWindowMs === undefined ? {} : { windowMs: options.redeliveryWindowMs }),
    }),
    onError: scrubber.wrap(options.onError ?? console.error),
    learn(adapter) {
      if (learnt.has(adapter)) return;
      learnt.add(adapter);
      for (const secret of secretsOfAdapter(adapter)) secrets.add(secret);
    },
  };
  return { context, secrets };
}

/**
 * Connect a Chat SDK `Chat` to a runtime: new mentions (the thread is then subscribed) and messages of subscribed
 * threads go to session `<adapter>:<thread id>` with the platform message id as the message id (a redelivery
 * within 48 hours, even after a restart, is ignored), `/stop` aborts the thread's run (typed as text, or tagged as a command by the platform),
 * and each run's reply is posted to the thread exactly once through a durable consumer: streamed into one message
 * by edits, or as blocks with `stream: false`. The adapters' bot tokens never reach a log, an event or the ledger.
 * Create the Chat with `concurrency: 'concurrent'`: agentlanes queues, steers and batches per session itself, and
 * the Chat SDK's default strategy drops a message that arrives while a handler of its thread still runs.
 */
export function connectChat(chat: Chat, options: ChatSdkAdapterOptions): ChatSdkConnection {
  const { context, secrets } = createChatContext(options);
  chat.onNewMention(
    scrubbing(context, async (thread: Thread, message: Message) => {
      context.learn(thread.adapter);
      await thread.subscribe();
      await receive(context, thread, message);
    }),
  );
  chat.onSubscribedMessage(
    scrubbing(context, async (thread: Thread, message: Message) => {
      context.learn(thread.adapter);
      await receive(context, thread, message);
    }),
  );
  chat.onSlashCommand(
    scrubbing(context, async (event: SlashCommandEvent) => {
      context.learn(event.adapter);
      await receiveCommand(context, event);
    }),
  );
  const targetOptions = {
    format: options.format ?? 'markdown',
    stream: options.stream ?? true,
    editLimit: options.editLimit ?? 4000,
  } as const;
  const delivery = startReplyDelivery({
    runtime: options.runtime,
    ledger: options.ledger,
    consumer: options.consumer ?? 'chat-sdk',
    targetFor: (sessionKey) => {
      const adapter = adapterOf(chat, sessionKey);
      if (adapter === undefined) return undefined;
      context.learn(adapter);
      return createChatTarget(chat, sessionKey, targetOptions);
    },
    secrets: () => secrets,
    ...(options.interruptedNotice === undefined ? {} : { interruptedNotice: options.interruptedNotice }),
    ...(options.failureNotice === undefined ? {} : { failureNotice: options.failureNotice }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { delivery };
}
