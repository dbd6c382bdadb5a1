import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A message as the emulated chat holds it (what the user sees), after any edits. */
export interface ChatMessage {
  readonly chatId: number;
  readonly messageId: number;
  readonly fromBot: boolean;
  text: string;
  readonly threadId?: number;
  edits: number;
}

/** One Bot API call the emulator received. */
export interface ApiCall {
  readonly method: string;
  readonly body: Record<string, unknown>;
}

/** What a test sends as a user. */
export interface UserMessage {
  readonly chatId: number;
  readonly text: string;
  /** A forum topic (supergroup thread). */
  readonly threadId?: number;
  readonly userId?: number;
  /** The sender's first name. @default 'User' */
  readonly userName?: string;
  /** A document sent with the message (the text becomes its caption). */
  readonly document?: { readonly name: string; readonly mediaType: string; readonly content: string };
}

/** A file users sent, as getFile and the file URL serve it. */
interface StoredFile {
  readonly path: string;
  readonly bytes: Buffer;
}

type Update = { update_id: number; message: Record<string, unknown> };

/** An administrator of a group chat, as the test sets it: the creator (owner) or an appointed administrator. */
export interface ChatAdministrator {
  readonly userId: number;
  readonly name: string;
  readonly status: 'creator' | 'administrator';
}

/** How a failing Bot API answers: HTTP 500, a connection reset mid-request, or a body that is not JSON. */
export type ApiFailure = 'http-500' | 'reset' | 'malformed-json';

/** Options of `startTelegramEmulator`. */
export interface TelegramEmulatorOptions {
  readonly token?: string;
  /**
   * Make a call fail: asked for each Bot API method call (`'file'` for a file download) except `getUpdates`;
   * undefined lets it through.
   */
  readonly failure?: (method: string) => ApiFailure | undefined;
}

/** Telegram's limit on a message's text, in UTF-16 code units after entity parsing. */
export const telegramTextLimit = 4096;

/** Characters MarkdownV2 reserves: outside an entity each must be escaped with a preceding '\'. */
const reservedCharacters = '_*[]()~`>#+-=|{}.!';

/**
 * The text a user reads of a MarkdownV2 message (escapes and entity markers removed), as Telegram parses it, or
 * Telegram's error for an unescaped reserved character. Simplified: markers are not checked for balance.
 */
export function parseMarkdownV2(text: string): { plain: string } | { error: string } {
  let plain = '';
  let code: 'none' | 'inline' | 'pre' = 'none';
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (character === '\\') {
      const escaped = text[index + 1];
      if (escaped === undefined)
        return { error: "Bad Request: can't parse entities: unexpected end of text" };
      plain += escaped;
      index++;
    } else if (code === 'pre' || text.startsWith('```', index)) {
      if (text.startsWith('```', index)) {
        index += 2;
        code = code === 'pre' ? 'none' : 'pre';
      } else plain += character;
    } else if (character === '`') {
      code = code === 'inline' ? 'none' : 'inline';
    } else if (code === 'inline') {
      plain += character;
    } else if (character === ']' && text[index + 1] === '(') {
      // A link's URL is not part of the text.
      while (index < text.length && text[index] !== ')') index += text[index] === '\\' ? 2 : 1;
    } else if (
      '*_~|['.includes(character) ||
      (character === '>' && (index === 0 || text[index - 1] === '\n'))
    ) {
      // An entity's marker: not part of the text.
    } else if (reservedCharacters.includes(character)) {
      return {
        error: `Bad Request: can't parse entities: Character '${character}' is reserved and must be escaped with the preceding '\\'`,
      };
    } else plain += character;
  }
  return { plain };
}

/** A message's text as Telegram counts and checks it: after parsing, when sent with `parse_mode`. */
function parsedText(body: Record<string, unknown>): { plain: string } | { error: string } {
  const text = typeof body.text === 'string' ? body.text : '';
  return body.parse_mode === 'MarkdownV2' ? parseMarkdownV2(text) : { plain: text };
}

/** The `bot_command` entity Telegram tags a message starting with a command with (`/stop`, `/stop@bot`). */
export function commandEntities(text: string): { type: 'bot_command'; offset: 0; length: number }[] {
  const command = /^\/[A-Za-z0-9_]{1,32}(@\w+)?/.exec(text);
  return command === null ? [] : [{ type: 'bot_command', offset: 0, length: command[0].length }];
}
type Waiter = { readonly check: () => boolean; readonly resolve: () => void };

/** A Telegram Bot API emulator on 127.0.0.1 (getUpdates long polling, sendMessage, editMessageText, ...). */
export interface TelegramEmulator {
  /** The API root to give grammY (`client.apiRoot`) or the Chat SDK Telegram adapter (`apiBaseUrl`). */
  readonly apiRoot: string;
  readonly token: string;
  readonly botId: number;
  /**
   * Set a group chat's administrators (a chat with a negative id is a group), as getChatAdministrators answers
   * them; a private chat has none (Telegram refuses the call there).
   */
  setAdministrators(chatId: number, administrators: readonly ChatAdministrator[]): void;
  /** A user writes in a chat: queued for getUpdates. Returns the update (to deliver again, `redeliver`). */
  userSends(message: UserMessage): Update;
  /** Deliver an update again under a new update id, as after a lost acknowledgement. */
  redeliver(update: Update): void;
  /** Messages in a chat (user's and bot's), in order. */
  chat(chatId: number): ChatMessage[];
  /** The bot's messages in a chat. */
  botMessages(chatId: number): ChatMessage[];
  readonly calls: readonly ApiCall[];
  /** Resolves once `check` holds (checked after every call); never a sleep. */
  until(check: () => boolean): Promise<void>;
  close(): Promise<void>;
}

/** The JSON body of a request (the adapters send JSON for the methods emulated here). */
async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  if ((request.headers['content-type'] ?? '').includes('json'))
    return JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(text));
}

/** Answer like the Bot API: `{ ok, result }` or `{ ok: false, error_code, description }`. */
function answer(response: ServerResponse, status: number, payload: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(payload));
}

/** Start the emulator on a free loopback port. */
export async function startTelegramEmulator(
  options: TelegramEmulatorOptions = {},
): Promise<TelegramEmulator> {
  const token = options.token ?? '123456:TEST-token_abc';
  const botId = Number(token.split(':')[0]);
  const chats = new Map<number, ChatMessage[]>();
  const calls: ApiCall[] = [];
  const updates: Update[] = [];
  const pollers = new Set<() => void>();
  const waiters = new Set<Waiter>();
  const files = new Map<string, StoredFile>();
  let nextUpdateId = 1;
  let nextMessageId = 1;

  const chatOf = (chatId: number): ChatMessage[] => {
    const found = chats.get(chatId);
    if (found !== undefined) return found;
    const created: ChatMessage[] = [];
    chats.set(chatId, created);
    return created;
  };
  const changed = (): void => {
    for (const poller of [...pollers]) poller();
    for (const waiter of [...waiters]) {
      if (waiter.check()) {
        waiters.delete(waiter);
        waiter.resolve();
      }
    }
  };
  const queue = (message: Record<string, unknown>): Update => {
    const update = { update_id: nextUpdateId++, message };
    updates.push(update);
    changed();
    return update;
  };

  const administrators = new Map<number, readonly ChatAdministrator[]>();
  const methods = createMethods({
    botId,
    chatOf,
    files,
    administrators,
    nextId: () => nextMessageId++,
  });

  async function getUpdates(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
    const offset = Number(body.offset ?? 0);
    // Confirmed updates are forgotten, as Telegram does.
    while (updates.length > 0 && (updates[0] as Update).update_id < offset) updates.shift();
    const limit = Number(body.limit ?? 100);
    const timeoutSeconds = Number(body.timeout ?? 0);
    const ready = (): Update[] => updates.filter((update) => update.update_id >= offset).slice(0, limit);
    if (ready().length > 0 || timeoutSeconds === 0) {
      answer(response, 200, { ok: true, result: ready() });
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        if (ready().length === 0 && !response.destroyed && !closing) return;
        pollers.delete(done);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        pollers.delete(done);
        resolve();
      }, timeoutSeconds * 1000);
      response.on('close', () => {
        pollers.delete(done);
        clearTimeout(timer);
        resolve();
      });
      pollers.add(done);
    });
    if (!response.destroyed) answer(response, 200, { ok: true, result: ready() });
  }

  /** Answer the call as a failing Bot API would, when the test asks so; true when it did. */
  const fail = (method: string, request: IncomingMessage, response: ServerResponse): boolean => {
    const failure = options.failure?.(method);
    if (failure === undefined) return false;
    if (failure === 'reset') response.socket?.destroy();
    else if (failure === 'malformed-json') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok": true, "result": ');
    } else {
      // As a failing proxy in front of the Bot API may answer: the request's path (and so the token) echoed.
      const description = `Internal Server Error: POST ${request.url ?? ''}`;
      answer(response, 500, { ok: false, error_code: 500, description });
    }
    return true;
  };

  let closing = false;
  const server = createServer((request, response) => {
    void (async () => {
      const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(request.url ?? '');
      if (download !== null && download[1] === token && fail('file', request, response)) return;
      if (download !== null) {
        const file = [...files.values()].find((stored) => stored.path === download[2]);
        if (download[1] !== token || file === undefined) {
          answer(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
          return;
        }
        response.writeHead(200, { 'content-type': 'application/octet-stream' });
        response.end(file.bytes);
        return;
      }
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(request.url ?? '');
      if (match === null || match[1] !== token) {
        answer(response, 404, { ok: false, error_code: 404, description: 'Not Found' });
        return;
      }
      const method = match[2] as string;
      const body = await readBody(request);
      calls.push({ method, body });
      if (method !== 'getUpdates' && fail(method, request, response)) return;
      if (method === 'getUpdates') {
        await getUpdates(body, response);
        return;
      }
      const handler = methods[method];
      const result = handler === undefined ? notFound : handler(body);
      answer(response, result.ok ? 200 : result.error_code, result);
      changed();
    })().catch((error: unknown) =>
      answer(response, 500, { ok: false, error_code: 500, description: String(error) }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    botId,
    setAdministrators(chatId, list) {
      administrators.set(chatId, [...list]);
    },
    userSends(message) {
      const messageId = nextMessageId++;
      const stored: ChatMessage = {
        chatId: message.chatId,
        messageId,
        fromBot: false,
        text: message.text,
        ...(message.threadId === undefined ? {} : { threadId: message.threadId }),
        edits: 0,
      };
      chatOf(message.chatId).push(stored);
      const wire = wireMessage(stored, message.userId ?? message.chatId, message.userName);
      const { document } = message;
      if (document === undefined) return queue(wire);
      const fileId = `file-${messageId}`;
      files.set(fileId, { path: `documents/${fileId}`, bytes: Buffer.from(document.content) });
      const { text, entities, ...rest } = wire;
      return queue({
        ...rest,
        caption: text,
        ...(entities === undefined ? {} : { caption_entities: entities }),
        document: {
          file_id: fileId,
          file_unique_id: `u${fileId}`,
          file_name: document.name,
          mime_type: document.mediaType,
          file_size: Buffer.byteLength(document.content),
        },
      });
    },
    redeliver(update) {
      queue(update.message);
    },
    chat: (chatId) => [...chatOf(chatId)],
    botMessages: (chatId) => chatOf(chatId).filter((message) => message.fromBot),
    calls,
    until(check) {
      if (check()) return Promise.resolve();
      return new Promise((resolve) => waiters.add({ check, resolve }));
    },
    async close() {
      closing = true;
      changed();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Telegram's answer to an edit that changes nothing. */
const notModified =
  'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';

const notFound = { ok: false as const, error_code: 404, description: 'Not Found: method not found' };

/** A user's message as Telegram sends it in an update. */
function wireMessage(message: ChatMessage, userId: number, userName = 'User'): Record<string, unknown> {
  const isTopic = message.threadId !== undefined;
  // Telegram gives groups negative ids; a forum topic is in a supergroup.
  const chat = isTopic
    ? { id: message.chatId, type: 'supergroup', title: 'group', is_forum: true }
    : message.chatId < 0
      ? { id: message.chatId, type: 'supergroup', title: 'group' }
      : { id: message.chatId, type: 'private', first_name: userName };
  return {
    message_id: message.messageId,
    date: 1_700_000_000,
    chat,
    from: { id: userId, is_bot: false, first_name: userName },
    text: message.text,
    // Telegram tags a leading command; the Chat SDK's adapter routes a message by this tag.
    ...(commandEntities(message.text).length === 0 ? {} : { entities: commandEntities(message.text) }),
    ...(isTopic ? { message_thread_id: message.threadId, is_topic_message: true } : {}),
  };
}

type Result = { ok: true; result: unknown } | { ok: false; error_code: number; description: string };

/** The Bot API methods besides getUpdates. */
function createMethods(deps: {
  botId: number;
  chatOf: (chatId: number) => ChatMessage[];
  files: ReadonlyMap<string, StoredFile>;
  administrators: ReadonlyMap<number, readonly ChatAdministrator[]>;
  nextId: () => number;
}): Record<string, (body: Record<string, unknown>) => Result> {
  const { botId, chatOf } = deps;
  const bot = { id: botId, is_bot: true, first_name: 'Lanes', username: 'lanes_bot' };
  const badRequest = (description: string): Result => ({ ok: false, error_code: 400, description });
  return {
    getMe: () => ({
      ok: true,
      result: { ...bot, can_join_groups: true, can_read_all_group_messages: false },
    }),
    deleteWebhook: () => ({ ok: true, result: true }),
    getWebhookInfo: () => ({
      ok: true,
      result: { url: '', has_custom_certificate: false, pending_update_count: 0 },
    }),
    sendChatAction: (body) =>
      body.chat_id === undefined ? badRequest('Bad Request: chat_id is empty') : { ok: true, result: true },
    sendMessage(body) {
      const chatId = Number(body.chat_id);
      const text = typeof body.text === 'string' ? body.text : '';
      if (!Number.isFinite(chatId)) return badRequest('Bad Request: chat not found');
      const parsed = parsedText(body);
      if ('error' in parsed) return badRequest(parsed.error);
      if (parsed.plain.length === 0) return badRequest('Bad Request: message text is empty');
      if (parsed.plain.length > telegramTextLimit) return badRequest('Bad Request: message is too long');
      const threadId = body.message_thread_id === undefined ? undefined : Number(body.message_thread_id);
      const message: ChatMessage = {
        chatId,
        messageId: deps.nextId(),
        fromBot: true,
        text,
        ...(threadId === undefined ? {} : { threadId }),
        edits: 0,
      };
      chatOf(chatId).push(message);
      return { ok: true, result: { ...wireMessage(message, botId), from: bot } };
    },
    editMessageText(body) {
      const chatId = Number(body.chat_id);
      const text = typeof body.text === 'string' ? body.text : '';
      const message = chatOf(chatId).find(
        (found) => found.messageId === Number(body.message_id) && found.fromBot,
      );
      if (message === undefined) return badRequest('Bad Request: message to edit not found');
      const parsed = parsedText(body);
      if ('error' in parsed) return badRequest(parsed.error);
      if (parsed.plain.length > telegramTextLimit) return badRequest('Bad Request: message is too long');
      if (message.text === text) return badRequest(notModified);
      message.text = text;
      message.edits++;
      return { ok: true, result: { ...wireMessage(message, botId), from: bot, edit_date: 1_700_000_001 } };
    },
    getFile(body) {
      const fileId = String(body.file_id);
      const file = deps.files.get(fileId);
      if (file === undefined) return badRequest('Bad Request: invalid file_id');
      const result = {
        file_id: fileId,
        file_unique_id: `u${fileId}`,
        file_size: file.bytes.length,
        file_path: file.path,
      };
      return { ok: true, result };
    },
    getChatAdministrators(body) {
      const chatId = Number(body.chat_id);
      if (!Number.isFinite(chatId)) return badRequest('Bad Request: chat not found');
      if (chatId > 0) return badRequest('Bad Request: there are no administrators in the private chat');
      const list = deps.administrators.get(chatId) ?? [];
      return { ok: true, result: list.map(chatMemberOf) };
    },
    setMyCommands: () => ({ ok: true, result: true }),
    close: () => ({ ok: true, result: true }),
  };
}

/** A ChatMember object as getChatAdministrators returns it (ChatMemberOwner or ChatMemberAdministrator). */
function chatMemberOf(administrator: ChatAdministrator): Record<string, unknown> {
  const user = { id: administrator.userId, is_bot: false, first_name: administrator.name };
  if (administrator.status === 'creator') return { status: 'creator', user, is_anonymous: false };
  return {
    status: 'administrator',
    user,
    can_be_edited: false,
    is_anonymous: false,
    can_manage_chat: true,
    can_delete_messages: true,
    can_manage_video_chats: false,
    can_restrict_members: true,
    can_promote_members: false,
    can_change_info: false,
    can_invite_users: true,
    can_post_stories: false,
    can_edit_stories: false,
    can_delete_stories: false,
  };
}
