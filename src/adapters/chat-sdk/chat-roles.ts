import type { Author } from 'chat';

/** Where a message was written, as the role lookup sees it. */
export interface ChatPlace {
  /** The platform adapter's name (`telegram`, `slack`, …). */
  readonly adapter: string;
  /** The channel (chat) id. */
  readonly channelId: string;
  /** A direct message with the bot: its one person is the owner of the conversation. */
  readonly isDM: boolean;
}

/** How the Chat SDK adapter finds a sender's role (docs/semantics.md, "Authority in group chats"). */
export interface ChatRoleOptions {
  /**
   * The application's answer from the author data the platform gives (id, name, handle, email, bot flag);
   * `undefined` falls back to the rules below. @default none
   */
  readonly roleOf?: (author: Author, place: ChatPlace) => string | undefined | Promise<string | undefined>;
  /** The role of the person in a direct message. @default 'owner' */
  readonly direct?: string;
}

/**
 * The role of a message's author: the application's `roleOf`, else `direct` in a direct message, else none (the
 * runtime's default role: the Chat SDK carries no platform roles, so a group member is never guessed upwards).
 */
export async function roleOfAuthor(
  options: ChatRoleOptions,
  author: Author,
  place: ChatPlace,
): Promise<string | undefined> {
  const own = await options.roleOf?.(author, place);
  if (own !== undefined) return own;
  return place.isDM ? (options.direct ?? 'owner') : undefined;
}
