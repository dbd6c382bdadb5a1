import { afterEach, describe, expect, it } from 'vitest';
import { fakeClock, type Script } from 'agentlanes/testing';
import { startTelegramEmulator, type TelegramEmulator } from '../support/telegram-emulator.js';
import { tempLedgerPath } from '../support/temp-ledger.js';
import { startChatFixture } from './chat-fixture.js';
import { startTelegramFixture } from './telegram-fixture.js';

const minute = 60_000;

/** Run ids a second process takes: never those of the first (deliveries are recorded by run id). */
const secondProcessIds = (prefix: string): string => `${prefix}_second_${++secondIds}`;
let secondIds = 0;

/** Every request answered with what the user said, so a second answer to a message shows. */
const echo: Script = (request) => ({ text: `You said: ${String(request.messages.at(-1)?.content)}` });

/** What a Telegram user reads: MarkdownV2 escapes removed. */
const unescaped = (text: string): string => text.replace(/\\([_*[\]()~`>#+\-=|{}.!\\])/g, '$1');

let emulator: TelegramEmulator | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await emulator?.close();
  emulator = undefined;
});

/** The bot's texts in a chat, as the user reads them. */
function botTexts(chatId: number): string[] {
  return (emulator as TelegramEmulator).botMessages(chatId).map((message) => unescaped(message.text));
}

/** A user writes in a fresh chat and the bot answers: every update before it was handled (in order). */
async function marker(chatId: number): Promise<void> {
  const current = emulator as TelegramEmulator;
  current.userSends({ chatId, text: `marker ${chatId}` });
  await current.until(() => botTexts(chatId).length === 1);
}

describe('adapter redelivery dedupe', () => {
  it('answers an update redelivered after 6 minutes, 2 hours and a restart once (grammY)', async () => {
    emulator = await startTelegramEmulator();
    const clock = fakeClock({ now: 1_000_000 });
    const ledgerPath = tempLedgerPath('redelivery');
    const first = await startTelegramFixture(echo, { emulator, clock, ledgerPath });
    closers.push(() => first.close());
    const update = emulator.userSends({ chatId: 81, text: 'hello' });
    await emulator.until(() => botTexts(81).length === 1);
    await clock.advance(6 * minute);
    emulator.redeliver(update);
    await marker(82);
    await clock.advance(2 * 60 * minute);
    emulator.redeliver(update);
    await marker(83);
    expect(botTexts(81)).toEqual(['You said: hello']);
    await first.close();
    closers.pop();
    const second = await startTelegramFixture(echo, {
      emulator,
      clock,
      ledgerPath,
      runtime: { ids: secondProcessIds },
    });
    closers.push(() => second.close());
    emulator.redeliver(update);
    await marker(84);
    expect(botTexts(81)).toEqual(['You said: hello']);
    expect(second.model.requests.map((request) => request.messages.at(-1)?.content)).toEqual(['marker 84']);
  });

  it('answers a message again once the 48-hour window has passed (grammY)', async () => {
    emulator = await startTelegramEmulator();
    const clock = fakeClock({ now: 1_000_000 });
    const fixture = await startTelegramFixture(echo, { emulator, clock });
    closers.push(() => fixture.close());
    const update = emulator.userSends({ chatId: 85, text: 'hello' });
    await emulator.until(() => botTexts(85).length === 1);
    await clock.advance(49 * 60 * minute);
    emulator.redeliver(update);
    await emulator.until(() => botTexts(85).length === 2);
  });

  it('answers an update redelivered after 6 minutes, 2 hours and a restart once (Chat SDK)', async () => {
    emulator = await startTelegramEmulator();
    const clock = fakeClock({ now: 1_000_000 });
    const ledgerPath = tempLedgerPath('redelivery');
    const setup = { emulator, clock, ledgerPath, adapter: { format: 'raw' as const } };
    const first = await startChatFixture(echo, setup);
    closers.push(() => first.close());
    const update = emulator.userSends({ chatId: 91, text: 'hello' });
    await emulator.until(() => botTexts(91).length === 1);
    await clock.advance(6 * minute);
    emulator.redeliver(update);
    await marker(92);
    await clock.advance(2 * 60 * minute);
    emulator.redeliver(update);
    await marker(93);
    expect(botTexts(91)).toEqual(['You said: hello']);
    await first.close();
    closers.pop();
    // A new process: the Chat SDK's own (in-memory) dedupe starts empty.
    const second = await startChatFixture(echo, { ...setup, runtime: { ids: secondProcessIds } });
    closers.push(() => second.close());
    emulator.redeliver(update);
    await marker(94);
    expect(botTexts(91)).toEqual(['You said: hello']);
    expect(second.model.requests.map((request) => request.messages.at(-1)?.content)).toEqual(['marker 94']);
  });
});
