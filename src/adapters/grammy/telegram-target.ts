import type { Api } from 'grammy';
import { createBlockChunker } from '../../policies/index.js';
import type { ReplyTarget } from '../delivery/reply-target.js';
import type { TelegramPlace } from './telegram-keys.js';

/** Telegram refuses messages over 4096 characters; chunks stay below, with room for a reopened code fence. */
export const telegramChunk = { minChars: 3000, maxChars: 4000 } as const;

/** Cut a text into messages Telegram accepts, at paragraph, line, sentence or word breaks (never mid-fence). */
export function chunkForTelegram(text: string): string[] {
  if (text.length <= telegramChunk.maxChars) return [text];
  const chunker = createBlockChunker(telegramChunk);
  return [...chunker.push(text), ...chunker.flush()];
}

/**
 * Where a Telegram chat's replies go through grammY's `Api`: each block its own message (chunked at Telegram's
 * limit; the ids joined by ','), and the typing indicator.
 */
export function createTelegramTarget(api: Api, place: TelegramPlace): ReplyTarget {
  const topic = place.threadId === undefined ? {} : { message_thread_id: place.threadId };
  return {
    async post(text) {
      const ids: string[] = [];
      for (const chunk of chunkForTelegram(text)) {
        const sent = await api.sendMessage(place.chatId, chunk, topic);
        ids.push(String(sent.message_id));
      }
      return ids.join(',');
    },
    async typing() {
      await api.sendChatAction(place.chatId, 'typing', topic);
    },
  };
}
