import type { Bot, Context, MiddlewareFn } from 'grammy';
import type { Message } from 'grammy/types';
import type { Clock } from '../../core/index.js';
import { systemClock } from '../../core/index.js';
import type { ConsumerStore, DeliveryStore } from '../../ledger/index.js';
import type { QueueSettingsInput } from '../../policies/index.js';
import type { Runtime } from '../../runtime/index.js';
import { startReplyDelivery, type ReplyDelivery } from '../delivery/reply-delivery.js';
import { createSecretScrubber, type SecretScrubber } from '../delivery/secret-scrubber.js';
import { createInboundDedupe, type InboundDedupe } from '../delivery/inbound-dedupe.js';
import { stopRun } from '../delivery/stop-command.js';
import { attachmentOf, downloadAttachment, type BinaryPart } from './telegram-attachments.js';
import { telegramPlaceOf, telegramSessionKey } from './telegram-keys.js';
import { createTelegramTarget } from './telegram-target.js';
import { createTelegramRoles, type TelegramRoleOptions, type TelegramRoles } from './telegram-roles.js';

/** Options of `connectGrammy`. */
export interface GrammyAdapterOptions {
  readonly runtime: Runtime;
  /**
   * The ledger the runtime was created with: deliveries are recorded there with the consumer's position, and the
   * messages handled (a redelivery within `redeliveryWindowMs` is ignored, across restarts).
   */
  readonly ledger: DeliveryStore & ConsumerStore;
  /** The durable consumer that delivers replies (one per bot). @default 'grammy' */
  readonly consumer?: string;
  /** Queue settings for every inbound message (e.g. `{ mode: 'steer' }`). @default the runtime's */
  readonly sendOptions?: QueueSettingsInput;
  /** The Bot API root the bot uses (`client.apiRoot`); files are downloaded from it. @default 'https://api.telegram.org' */
  readonly apiRoot?: string;
  /** How photos, documents, voice notes and audio reach the model (content parts). @default 'file' */
  readonly attachmentMode?: 'file' | 'inline';
  /** The command that aborts the chat's run (when the sender's role may: `authority.control.stop`). @default 'stop' */
  readonly stopCommand?: string;
  /**
   * How each message's sender gets a role: in groups from the Bot API's chat administrators (cached), in a private
   * chat `owner`; `false` sends no role (every message has the runtime's default role). @default {}
   */
  readonly roles?: TelegramRoleOptions | false;
  /** What the chat is told when a sender's role may not stop its run; null: nothing. @default stopRefusedNotice */
  readonly stopRefusedNotice?: string | null;
  /**
   * How long a handled message is remembered, so Telegram redelivering its update (it retries for hours) is not
   * answered twice. @default 48 hours
   */
  readonly redeliveryWindowMs?: number;
  /** The text a chat gets when its run crashed mid-reply. */
  readonly interruptedNotice?: string;
  /** The text a chat gets when its run failed or timed out; null: nothing. */
  readonly failureNotice?: string | null;
  readonly clock?: Clock;
  /** Background failures, with the bot token masked. @default console.error */
  readonly onError?: (error: unknown) => void;
}

/** A bot connected to a runtime. */
export interface GrammyConnection {
  /** The middleware `connectGrammy` installed (feeds text messages to sessions; `/stop` aborts). */
  readonly middleware: MiddlewareFn<Context>;
  /** The reply delivery loop (a durable consumer). */
  readonly delivery: ReplyDelivery;
}

/** True when `text` is the stop command (`/stop`, or `/stop@botname`). */
function isCommand(text: string, command: string): boolean {
  return new RegExp(`^/${command}(@\\w+)?\\s*$`).test(text);
}

/** What a message brings in: its text (or caption) and, downloaded, its attachment as a part. */
async function inboundOf(
  bot: Bot,
  options: GrammyAdapterOptions,
  onError: (error: unknown) => void,
  message: Message,
): Promise<{ text?: string; parts?: BinaryPart[] } | undefined> {
  const text = message.text ?? message.caption;
  const attachment = attachmentOf(message);
  if (attachment === undefined) return text === undefined ? undefined : { text };
  const files = {
    apiRoot: options.apiRoot ?? 'https://api.telegram.org',
    token: bot.token,
    mode: options.attachmentMode ?? 'file',
  } as const;
  try {
    const part = await downloadAttachment(bot.api, files, attachment);
    return { ...(text === undefined ? {} : { text }), parts: [part] };
  } catch (error) {
    // Not dropped in silence: the agent hears of the file it could not get.
    onError(error);
    return { text: `${text ?? ''}\n[${attachment.name} could not be downloaded]`.trim() };
  }
}

/** The sender of a message: id, first name and, with roles on, the role found for them in the chat. */
async function senderOf(
  runtime: Runtime,
  roles: TelegramRoles | undefined,
  message: Message,
): Promise<{ id: string; name: string; role?: string } | undefined> {
  const from = message.from;
  if (from === undefined) return undefined;
  const user = { id: from.id, name: from.first_name };
  const found = await roles?.roleOf(user, { id: message.chat.id, type: message.chat.type });
  // A role the runtime does not know (its roles are the application's own) is left out: the default role, never more.
  const role = found !== undefined && runtime.authority.roles.includes(found) ? found : undefined;
  return { id: String(from.id), name: from.first_name, ...(role === undefined ? {} : { role }) };
}

/** The middleware: a message goes to the session of its chat (and topic), with its message id. */
function createMiddleware(
  bot: Bot,
  options: GrammyAdapterOptions,
  scrubber: SecretScrubber,
  dedupe: InboundDedupe,
): MiddlewareFn<Context> {
  const stopCommand = options.stopCommand ?? 'stop';
  const onError = scrubber.wrap(options.onError ?? console.error);
  const roles =
    options.roles === false
      ? undefined
      : createTelegramRoles(bot.api, options.roles ?? {}, options.clock ?? systemClock, onError);
  const handle: MiddlewareFn<Context> = async (context, next) => {
    const message = context.message;
    if (message === undefined) return next();
    const threadId = message.is_topic_message === true ? message.message_thread_id : undefined;
    const key = telegramSessionKey({
      chatId: message.chat.id,
      ...(threadId === undefined ? {} : { threadId }),
    });
    const session = options.runtime.session(key);
    const messageId = String(message.message_id);
    // A redelivered update (Telegram retries for hours; the runtime's own dedupe holds 5 minutes): handled once.
    if (await dedupe.seen(key, messageId)) return;
    const sender = await senderOf(options.runtime, roles, message);
    if (message.text !== undefined && isCommand(message.text, stopCommand)) {
      const thread = threadId === undefined ? {} : { message_thread_id: threadId };
      await stopRun(options, session, sender, (notice) =>
        bot.api.sendMessage(message.chat.id, notice, thread),
      );
      await dedupe.remember(key, messageId);
      return;
    }
    const content = await inboundOf(bot, options, onError, message);
    if (content === undefined) return next();
    const input = {
      id: messageId,
      ...content,
      channel: 'telegram',
      ...(sender === undefined ? {} : { sender }),
    };
    await session.send(input, options.sendOptions);
    await dedupe.remember(key, messageId);
  };
  // grammY hands what a middleware throws to the bot's error handler, which logs it: the token never goes there.
  return async (context, next) => {
    try {
      await handle(context, next);
    } catch (error) {
      throw scrubber.error(error);
    }
  };
}

/**
 * Connect a grammY `Bot` to a runtime: messages (text, and photos, documents, voice notes and audio as content
 * parts) go to session `telegram:<chat id>` (plus `:<message_thread_id>` in a forum topic) with the Telegram
 * message id as the message id (an update redelivered within 48 hours, even after a restart, is ignored), `/stop` aborts the chat's run, and the runs' reply blocks are sent back
 * exactly once through a durable consumer, with a typing indicator while a run streams. The bot token is masked
 * in every error the adapter logs, rethrows or records.
 */
export function connectGrammy(bot: Bot, options: GrammyAdapterOptions): GrammyConnection {
  const scrubber = createSecretScrubber(() => [bot.token]);
  const consumer = options.consumer ?? 'grammy';
  const dedupe = createInboundDedupe({
    store: options.ledger,
    consumer,
    clock: options.clock ?? systemClock,
    ...(options.redeliveryWindowMs === undefined ? {} : { windowMs: options.redeliveryWindowMs }),
  });
  const middleware = createMiddleware(bot, options, scrubber, dedupe);
  bot.use(middleware);
  const delivery = startReplyDelivery({
    runtime: options.runtime,
    ledger: options.ledger,
    consumer,
    targetFor: (sessionKey) => {
      const place = telegramPlaceOf(sessionKey);
      return place === undefined ? undefined : createTelegramTarget(bot.api, place);
    },
    secrets: () => [bot.token],
    ...(options.interruptedNotice === undefined ? {} : { interruptedNotice: options.interruptedNotice }),
    ...(options.failureNotice === undefined ? {} : { failureNotice: options.failureNotice }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { middleware, delivery };
}
