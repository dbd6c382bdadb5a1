import { createTelegramAdapter } from '@chat-adapter/telegram';
import { createMemoryState } from '@chat-adapter/state-memory';
import { Chat, ConsoleLogger, type Adapter } from 'chat';
import { afterEach, describe, expect, it } from 'vitest';
import { createChatTarget } from '../../src/adapters/chat-sdk/chat-target.js';
import { splitToFit } from '../../src/adapters/delivery/deliver-block.js';
import { startTelegramEmulator, type TelegramEmulator } from '../support/telegram-emulator.js';

let emulator: TelegramEmulator | undefined;
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
});

describe('splitToFit', () => {
  it('cuts a text into pieces that each measure within the limit, losing nothing, when it measures over it', () => {
    const text = 'Step a_b-c (see v1.2)! '.repeat(200).trim();
    // Twice as long as sent: every character escaped.
    const measure = (piece: string): number => piece.length * 2;
    const pieces = splitToFit(text, 1000, measure);
    expect(pieces.length).toBeGreaterThan(9);
    for (const piece of pieces) expect(measure(piece)).toBeLessThanOrEqual(1000);
    expect(pieces.join('').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  });

  it('keeps a text whole when it measures within the limit', () => {
    expect(splitToFit('short one.', 100, (piece) => piece.length)).toEqual(['short one.']);
  });
});

describe('createChatTarget', () => {
  it('takes an edit Telegram answers "message is not modified" as done', async () => {
    emulator = await startTelegramEmulator();
    const chat = new Chat({
      userName: 'lanes_bot',
      adapters: {
        telegram: createTelegramAdapter({
          botToken: emulator.token,
          apiBaseUrl: emulator.apiRoot,
          mode: 'polling',
          userName: 'lanes_bot',
          logger: new ConsoleLogger('silent'),
        }) as Adapter,
      },
      state: createMemoryState(),
      logger: 'silent',
    });
    const target = createChatTarget(chat, 'telegram:41', {
      format: 'markdown',
      stream: true,
      editLimit: 4000,
    });
    const id = await target.post('Hello there.');
    await target.edit?.(id, 'Hello there.');
    const refusals = emulator.calls.filter((call) => call.method === 'editMessageText');
    expect(refusals).toHaveLength(1);
    expect(emulator.botMessages(41).map((message) => message.text)).toEqual(['Hello there\\.']);
  });
});
