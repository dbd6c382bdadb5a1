import Database from 'better-sqlite3';
import { format, inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import {
  startTelegramEmulator,
  type ApiFailure,
  type TelegramEmulator,
} from '../support/telegram-emulator.js';
import { startChatFixture } from './chat-fixture.js';
import { startTelegramFixture } from './telegram-fixture.js';

const token = '7777777:AAHsecret-Token_value-42xyz';
/** The forms the token must never appear in. */
const tokenForms = [token, encodeURIComponent(token), token.split(':')[1] as string];

/** Methods a bot needs to start; every other call fails, in turn with HTTP 500, a reset and malformed JSON. */
const startMethods = new Set(['getMe', 'deleteWebhook', 'getWebhookInfo', 'getFile']);

/**
 * A Bot API emulator that fails every call but the start ones (and `getFile`, so downloads are tried): the
 * typing indicator always with a 500 that echoes the path (so the token), the others in turn with a 500, a
 * connection reset and malformed JSON.
 */
async function startFailingBotApi(): Promise<TelegramEmulator> {
  const failures: ApiFailure[] = ['http-500', 'reset', 'malformed-json'];
  let calls = 0;
  return startTelegramEmulator({
    token,
    failure: (method) => {
      if (startMethods.has(method)) return undefined;
      return method === 'sendChatAction' ? 'http-500' : failures[calls++ % failures.length];
    },
  });
}

/** Everything printed to the console while a test runs. */
function captureConsole(): string[] {
  const lines: string[] = [];
  for (const method of ['error', 'warn', 'log', 'info', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...values: unknown[]) => {
      lines.push(format(...values));
    });
  }
  return lines;
}

/** Every row of every table of a ledger file, as text. */
function ledgerText(path: string): string {
  const database = new Database(path, { readonly: true });
  try {
    const tables = database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as {
      name: string;
    }[];
    return tables
      .map(({ name }) => `${name}: ${JSON.stringify(database.prepare(`SELECT * FROM "${name}"`).all())}`)
      .join('\n');
  } finally {
    database.close();
  }
}

/** What leaked: the token forms found in `text`. */
function leaks(text: string): string[] {
  return tokenForms.filter((form) => text.includes(form));
}

const inDoubt = (event: RuntimeEvent): boolean => event.type === 'delivery.in_doubt';

let emulator: TelegramEmulator | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await emulator?.close();
  emulator = undefined;
});

describe('adapter secrets', () => {
  it('keeps the bot token out of the console, onError, events and the ledger when grammY meets a failing Bot API', async () => {
    const console = captureConsole();
    const errors: unknown[] = [];
    emulator = await startFailingBotApi();
    const fixture = await startTelegramFixture([{ text: 'Hello there, friend.' }, { text: 'Got it.' }], {
      emulator,
      adapter: { onError: (error) => errors.push(error) },
    });
    try {
      emulator.userSends({ chatId: 71, text: 'hello' });
      await fixture.event(inDoubt);
      emulator.userSends({
        chatId: 72,
        text: 'see attached',
        document: { name: 'notes.txt', mediaType: 'text/plain', content: 'buy milk' },
      });
      await fixture.event((event) => inDoubt(event) && event.sessionKey === 'telegram:72');
      await emulator.until(() => errors.length >= 2);
    } finally {
      await fixture.close();
    }
    const seen = [
      ...console,
      ...errors.map((error) => inspect(error, { depth: 10 })),
      JSON.stringify(fixture.events),
      ledgerText(fixture.ledgerPath),
    ].join('\n');
    // The failures happened and were reported: the typing call, the download, the sends.
    expect(fixture.events.filter(inDoubt).length).toBeGreaterThanOrEqual(2);
    expect(seen).toContain('bot***');
    expect(leaks(seen)).toEqual([]);
  });

  it('keeps the bot token out of a download error whose file URL cannot be parsed (grammY)', async () => {
    const errors: unknown[] = [];
    emulator = await startTelegramEmulator({ token });
    const fixture = await startTelegramFixture([{ text: 'Got it.' }], {
      emulator,
      // The bot's own API root works; the one files are fetched from is not a URL.
      adapter: { apiRoot: 'http://bad host', onError: (error) => errors.push(error) },
    });
    try {
      emulator.userSends({
        chatId: 73,
        text: 'see attached',
        document: { name: 'notes.txt', mediaType: 'text/plain', content: 'buy milk' },
      });
      await fixture.event((event) => event.type === 'run.ended');
    } finally {
      await fixture.close();
    }
    const seen = errors.map((error) => inspect(error, { depth: 10 })).join('\n');
    expect(seen).toContain('Failed to parse URL');
    expect(leaks(seen)).toEqual([]);
  });

  it('keeps the bot token out of the console, onError, events and the ledger when the Chat SDK meets a failing Bot API', async () => {
    const console = captureConsole();
    const errors: unknown[] = [];
    emulator = await startFailingBotApi();
    const fixture = await startChatFixture(
      [{ text: 'Hello there, my friend.' }, { text: 'One more answer here.' }],
      { emulator, adapter: { onError: (error) => errors.push(error) } },
    );
    try {
      emulator.userSends({ chatId: 74, text: 'hello' });
      await fixture.event(inDoubt);
      emulator.userSends({ chatId: 75, text: 'again' });
      await fixture.event((event) => inDoubt(event) && event.sessionKey === 'telegram:75');
      await emulator.until(() => errors.length >= 1);
    } finally {
      await fixture.close();
    }
    const seen = [
      ...console,
      ...errors.map((error) => inspect(error, { depth: 10 })),
      JSON.stringify(fixture.events),
      ledgerText(fixture.ledgerPath),
    ].join('\n');
    expect(fixture.events.filter(inDoubt).length).toBeGreaterThanOrEqual(2);
    expect(seen).toContain('bot***');
    expect(leaks(seen)).toEqual([]);
  });
});
