import type { Adapter, Chat } from 'chat';
import type { ReplyTarget } from '../delivery/reply-target.js';

/** How replies are written: markdown (rendered by the platform adapter) or the text as it is. */
export type ReplyFormat = 'markdown' | 'raw';

/** Options of a Chat SDK reply target. */
export interface ChatTargetOptions {
  readonly format: ReplyFormat;
  /** Stream a run's blocks into one message by editing it (platforms that can edit). */
  readonly stream: boolean;
  /** The longest a streamed message grows before a new one starts. */
  readonly editLimit: number;
}

/** The adapter a thread id belongs to (`<adapter name>:…`); undefined when the Chat has none of that name. */
export function adapterOf(chat: Chat, threadId: string): Adapter | undefined {
  const name = threadId.split(':', 1)[0] ?? '';
  try {
    return (chat.getAdapter as (name: string) => Adapter | undefined)(name);
  } catch {
    return undefined;
  }
}

/** Where a Chat SDK thread's replies go: posted to the thread, edited into one message when streaming. */
export function createChatTarget(chat: Chat, threadId: string, options: ChatTargetOptions): ReplyTarget {
  const adapter = adapterOf(chat, threadId) as Adapter;
  const message = (text: string) => (options.format === 'markdown' ? { markdown: text } : { raw: text });
  return {
    async post(text) {
      const sent = await adapter.postMessage(threadId, message(text));
      return sent.id;
    },
    ...(options.stream
      ? {
          edit: async (platformMessageId: string, text: string) => {
            await adapter.editMessage(threadId, platformMessageId, message(text));
          },
          editLimit: options.editLimit,
        }
      : {}),
    typing: () => adapter.startTyping(threadId),
  };
}
