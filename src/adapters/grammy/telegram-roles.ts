import type { Api } from 'grammy';
import type { Clock } from '../../core/index.js';

/** How the grammY adapter finds a sender's role (docs/semantics.md, "Authority in group chats"). */
export interface TelegramRoleOptions {
  /** The role of a group's creator. @default 'owner' */
  readonly creator?: string;
  /** The role of a group's administrators. @default 'admin' */
  readonly administrator?: string;
  /** The role of everyone else in a group. @default 'member' */
  readonly member?: string;
  /** The role of the one person in a private chat with the bot. @default 'owner' */
  readonly private?: string;
  /**
   * The application's own answer (guests by id, a paid tier…); `undefined` falls back to the Telegram status.
   * @default none
   */
  readonly roleOf?: (user: TelegramUser, chat: TelegramChat) => string | undefined;
  /** How many groups' administrator lists are kept. @default 500 */
  readonly cacheSize?: number;
  /** How long a group's administrator list is trusted before it is asked again. @default 60_000 */
  readonly cacheTtlMs?: number;
}

/** The sender of a Telegram message, as the role lookup sees it. */
export interface TelegramUser {
  readonly id: number;
  readonly name: string;
}

/** The chat of a Telegram message, as the role lookup sees it. */
export interface TelegramChat {
  readonly id: number;
  readonly type: 'private' | 'group' | 'supergroup' | 'channel';
}

/** Finds the role of a sender in a chat. */
export interface TelegramRoles {
  roleOf(user: TelegramUser, chat: TelegramChat): Promise<string>;
}

type Status = 'creator' | 'administrator';

/**
 * Roles from Telegram: in a group, the creator and administrators from the Bot API's getChatAdministrators, cached
 * per chat (at most `cacheSize` chats, each for `cacheTtlMs` on the injected clock, the least recently used
 * dropped first); a failed lookup is not cached and gives the member role, never more.
 */
export function createTelegramRoles(
  api: Pick<Api, 'getChatAdministrators'>,
  options: TelegramRoleOptions,
  clock: Clock,
  onError: (error: unknown) => void,
): TelegramRoles {
  const size = Math.max(1, options.cacheSize ?? 500);
  const ttlMs = options.cacheTtlMs ?? 60_000;
  const cache = new Map<number, { readonly until: number; readonly statuses: Map<number, Status> }>();
  const statusesOf = async (chatId: number): Promise<Map<number, Status> | undefined> => {
    const cached = cache.get(chatId);
    cache.delete(chatId);
    if (cached !== undefined && cached.until > clock.now()) {
      cache.set(chatId, cached);
      return cached.statuses;
    }
    try {
      const administrators = await api.getChatAdministrators(chatId);
      const statuses = new Map(administrators.map((member) => [member.user.id, member.status] as const));
      cache.set(chatId, { until: clock.now() + ttlMs, statuses });
      for (const oldest of cache.keys()) {
        if (cache.size <= size) break;
        cache.delete(oldest);
      }
      return statuses;
    } catch (error) {
      onError(error);
      return undefined;
    }
  };
  return {
    async roleOf(user, chat) {
      const own = options.roleOf?.(user, chat);
      if (own !== undefined) return own;
      if (chat.type === 'private') return options.private ?? 'owner';
      const status = (await statusesOf(chat.id))?.get(user.id);
      if (status === 'creator') return options.creator ?? 'owner';
      if (status === 'administrator') return options.administrator ?? 'admin';
      return options.member ?? 'member';
    },
  };
}
