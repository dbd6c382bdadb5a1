/** A Telegram chat, and the forum topic within it when the chat has topics. */
export interface TelegramPlace {
  readonly chatId: number;
  readonly threadId?: number;
}

const keyPattern = /^telegram:(-?\d+)(?::(\d+))?$/;

/** The session key of a Telegram chat: `telegram:<chat id>`, plus `:<message_thread_id>` for a forum topic. */
export function telegramSessionKey(place: TelegramPlace): string {
  return place.threadId === undefined
    ? `telegram:${place.chatId}`
    : `telegram:${place.chatId}:${place.threadId}`;
}

/** The chat (and topic) of a session key; undefined for a key that is not a Telegram chat's. */
export function telegramPlaceOf(sessionKey: string): TelegramPlace | undefined {
  const match = keyPattern.exec(sessionKey);
  if (match === null) return undefined;
  const chatId = Number(match[1]);
  return match[2] === undefined ? { chatId } : { chatId, threadId: Number(match[2]) };
}
