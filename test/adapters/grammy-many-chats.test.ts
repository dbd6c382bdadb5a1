import { afterEach, describe, expect, it } from 'vitest';
import { botTexts, startTelegramFixture, type TelegramFixture } from './telegram-fixture.js';

let fixture: TelegramFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const chatCount = 200;

describe('connectGrammy with many chats', () => {
  it('answers 200 chats writing at once, each exactly once and in its own chat', async () => {
    fixture = await startTelegramFixture((request) => ({
      text: `You said: ${String(request.messages.at(-1)?.content)}`,
    }));
    const { emulator } = fixture;
    const chatIds = Array.from({ length: chatCount }, (_, index) => 10_000 + index);
    for (const chatId of chatIds) emulator.userSends({ chatId, text: `question from ${chatId}` });
    const answered = (): boolean => chatIds.every((chatId) => emulator.botMessages(chatId).length > 0);
    await emulator.until(answered);
    await fixture.event(
      () => fixture?.events.filter((event) => event.type === 'run.ended').length === chatCount,
    );
    for (const chatId of chatIds) {
      expect(botTexts(fixture, chatId)).toEqual([`You said: question from ${chatId}`]);
    }
    expect(fixture.model.requests).toHaveLength(chatCount);
  });
});
