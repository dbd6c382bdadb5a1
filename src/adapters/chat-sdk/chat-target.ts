import { parseMarkdown, type Adapter, type Chat } from 'chat';
import type { ReplyTarget } from '../delivery/reply-target.js';

/** How replies are written: markdown (rendered by the platform adapter) or the text as it is. */
export type ReplyFormat = 'markdown' | 'raw';

/** Options of a Chat SDK reply target. */
export interface ChatTargetOptions {
  readonly format: ReplyFormat;
  /** Stream a run's blocks into one message by editing it (platforms that can edit). */
  readonly stream: boolean;
  /**
   * The longest a message grows (a streamed one before a new one starts; a longer block is split), measured on
   * the text as the platform adapter renders it (Markdown escaped).
   */
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

/** Telegram's answer to an edit that changes nothing: the message already shows the text. */
const notModifiedPattern = /message is not modified/i;

/**
 * The length of `text` as the platform adapter sends it: Markdown rendered to the platform's format (Telegram's
 * MarkdownV2 escapes `.`, `-`, `(`, `!`, `_`, ...), which is what the adapter measures against the platform's
 * limit (and cuts at, ending in an escaped "...").
 */
function measureFor(adapter: Adapter, format: ReplyFormat): (text: string) => number {
  if (format === 'raw') return (text) => text.length;
  return (text) => {
    try {
      return adapter.renderFormatted(parseMarkdown(text)).length;
    } catch {
      return text.length;
    }
  };
}

/**
 * Where a Chat SDK thread's replies go: posted to the thread, edited into one message when streaming, a long
 * block split into several messages (never cut by the platform adapter), an edit the platform calls "not
 * modified" taken as done.
 */
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
            try {
              await adapter.editMessage(threadId, platformMessageId, message(text));
            } catch (error) {
              if (error instanceof Error && notModifiedPattern.test(error.message)) return;
              throw error;
            }
          },
        }
      : {}),
    editLimit: options.editLimit,
    measure: measureFor(adapter, options.format),
    typing: () => adapter.startTyping(threadId),
  };
}
