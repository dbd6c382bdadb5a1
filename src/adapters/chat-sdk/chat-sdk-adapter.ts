import type { Chat, Message, Thread } from 'chat';
import type { Clock } from '../../core/clock.js';
import type { DeliveryStore } from '../../ledger/index.js';
import type { QueueSettingsInput } from '../../policies/queue-settings.js';
import type { Runtime } from '../../runtime/index.js';
import { startReplyDelivery, type ReplyDelivery } from '../delivery/reply-delivery.js';
import { partsOfMessage } from './chat-attachments.js';
import { adapterOf, createChatTarget, type ReplyFormat } from './chat-target.js';

/** Options of `connectChat`. */
export interface ChatSdkAdapterOptions {
  readonly runtime: Runtime;
  /** The ledger the runtime was created with: deliveries are recorded there with the consumer's position. */
  readonly ledger: DeliveryStore;
  /** The durable consumer that delivers replies (one per Chat). @default 'chat-sdk' */
  readonly consumer?: string;
  /** Queue settings for every inbound message (e.g. `{ mode: 'steer' }`). @default the runtime's */
  readonly sendOptions?: QueueSettingsInput;
  /** The command that aborts the thread's run. @default 'stop' */
  readonly stopCommand?: string;
  /** Stream a run's reply into one message by editing it; false: each block is its own message. @default true */
  readonly stream?: boolean;
  /** The longest a streamed message grows before the next block starts a new one. @default 4000 */
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
  /** Background failures. @default console.error */
  readonly onError?: (error: unknown) => void;
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

/** Feed one message to its thread's session; the stop command aborts the run instead. */
async function receive(options: ChatSdkAdapterOptions, thread: Thread, message: Message): Promise<void> {
  if (message.author.isMe) return;
  const session = options.runtime.session(chatSessionKey(thread));
  const command = options.stopCommand ?? 'stop';
  const text = message.text.trim();
  if (new RegExp(`^/${command}(@\\w+)?$`).test(text)) {
    await session.abort({ reason: `user sent /${command}` });
    return;
  }
  const onError = options.onError ?? console.error;
  const { parts, missing } = await partsOfMessage(message, options.attachmentMode ?? 'file', onError);
  // Not dropped in silence: the agent hears of a file it could not get.
  const said = [text, ...missing.map((name) => `[${name} could not be downloaded]`)].join('\n').trim();
  if (said === '' && parts.length === 0) return;
  await session.send(
    {
      id: message.id,
      ...(said === '' ? {} : { text: said }),
      ...(parts.length === 0 ? {} : { parts }),
      channel: thread.adapter.name,
      sender: { id: message.author.userId, name: message.author.fullName || message.author.userName },
    },
    options.sendOptions,
  );
}

/**
 * Connect a Chat SDK `Chat` to a runtime: new mentions (the thread is then subscribed) and messages of subscribed
 * threads go to session `<adapter>:<thread id>` with the platform message id as the message id (a redelivery is
 * answered `duplicate`), `/stop` aborts the thread's run, and each run's reply is posted to the thread exactly
 * once through a durable consumer: streamed into one message by edits, or as blocks with `stream: false`.
 * Create the Chat with `concurrency: 'concurrent'`: agentlanes queues, steers and batches per session itself, and
 * the Chat SDK's default strategy drops a message that arrives while a handler of its thread still runs.
 */
export function connectChat(chat: Chat, options: ChatSdkAdapterOptions): ChatSdkConnection {
  chat.onNewMention(async (thread, message) => {
    await thread.subscribe();
    await receive(options, thread, message);
  });
  chat.onSubscribedMessage((thread, message) => receive(options, thread, message));
  const targetOptions = {
    format: options.format ?? 'markdown',
    stream: options.stream ?? true,
    editLimit: options.editLimit ?? 4000,
  } as const;
  const delivery = startReplyDelivery({
    runtime: options.runtime,
    ledger: options.ledger,
    consumer: options.consumer ?? 'chat-sdk',
    targetFor: (sessionKey) =>
      adapterOf(chat, sessionKey) === undefined
        ? undefined
        : createChatTarget(chat, sessionKey, targetOptions),
    ...(options.interruptedNotice === undefined ? {} : { interruptedNotice: options.interruptedNotice }),
    ...(options.failureNotice === undefined ? {} : { failureNotice: options.failureNotice }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  });
  return { delivery };
}
