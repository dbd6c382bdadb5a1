import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from 'agentlanes';
import { defaultFailureNotice } from 'agentlanes/grammy';
import { botTexts, startTelegramFixture, type TelegramFixture } from './telegram-fixture.js';

let fixture: TelegramFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

const received =
  (messageId: string, disposition?: string) =>
  (event: RuntimeEvent): boolean =>
    event.type === 'message.received' &&
    event.messageId === messageId &&
    (disposition === undefined || event.disposition === disposition);

describe('connectGrammy', () => {
  it('answers a conversation, takes a steer into the running run, and aborts on /stop', async () => {
    fixture = await startTelegramFixture(
      [
        { text: 'Looking that up for you now.', tokenDelayMs: 100 },
        { text: 'It is 21 degrees Celsius.' },
        { hang: true },
      ],
      { adapter: { sendOptions: { mode: 'steer' } } },
    );
    const { emulator, clock } = fixture;
    const first = emulator.userSends({ chatId: 501, text: 'weather in Paris?' });
    await fixture.event(received(String(first.message.message_id), 'started'));
    const steer = emulator.userSends({ chatId: 501, text: 'use metric units' });
    await fixture.event(received(String(steer.message.message_id), 'steered'));
    await clock.advance(1000);
    await fixture.event((event) => event.type === 'run.ended');
    await emulator.until(() =>
      botTexts(fixture as TelegramFixture, 501)
        .join('\n')
        .includes('Celsius'),
    );
    expect(fixture.model.requests[1]?.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'use metric units',
    });
    const story = emulator.userSends({ chatId: 501, text: 'tell me a long story' });
    await fixture.event(received(String(story.message.message_id), 'started'));
    emulator.userSends({ chatId: 501, text: '/stop' });
    const ended = await fixture.event((event) => event.type === 'run.ended' && event.status === 'aborted');
    expect(ended).toMatchObject({ status: 'aborted' });
    const texts = botTexts(fixture, 501).join('\n');
    expect(texts.match(/Looking that up/g)).toHaveLength(1);
    expect(texts.match(/Celsius/g)).toHaveLength(1);
    expect(emulator.calls.some((call) => call.method === 'sendChatAction' && call.body.chat_id === 501)).toBe(
      true,
    );
  });

  it('collects a burst sent while a run streams into one run', async () => {
    fixture = await startTelegramFixture([
      { text: 'First answer.', tokenDelayMs: 100 },
      { text: 'One answer for all three.' },
    ]);
    const { emulator, clock } = fixture;
    const first = emulator.userSends({ chatId: 7, text: 'hi' });
    await fixture.event(received(String(first.message.message_id), 'started'));
    const burst = ['one', 'two', 'three'].map((text) => emulator.userSends({ chatId: 7, text }));
    for (const update of burst) await fixture.event(received(String(update.message.message_id), 'collected'));
    await clock.advance(1000);
    await clock.advance(1000);
    await emulator.until(() => botTexts(fixture as TelegramFixture, 7).length === 2);
    expect(botTexts(fixture, 7)).toEqual(['First answer.', 'One answer for all three.']);
    expect(fixture.model.requests).toHaveLength(2);
    const prompt = fixture.model.requests[1]?.messages.at(-1);
    expect(prompt?.content).toMatch(
      /Queued #1[\s\S]*one[\s\S]*Queued #2[\s\S]*two[\s\S]*Queued #3[\s\S]*three/,
    );
  });

  it('answers a redelivered update once', async () => {
    fixture = await startTelegramFixture([{ text: 'Hello once.' }, { text: 'Hello twice.' }]);
    const { emulator } = fixture;
    const update = emulator.userSends({ chatId: 9, text: 'hello' });
    await emulator.until(() => botTexts(fixture as TelegramFixture, 9).length === 1);
    emulator.redeliver(update);
    // Handled in order: once the next chat is answered, the redelivery was handled (ignored by the adapter).
    emulator.userSends({ chatId: 10, text: 'marker' });
    await emulator.until(() => botTexts(fixture as TelegramFixture, 10).length === 1);
    expect(botTexts(fixture, 9)).toEqual(['Hello once.']);
    expect(fixture.model.requests).toHaveLength(2);
  });

  it('tells the chat when a run failed instead of leaving it in silence', async () => {
    fixture = await startTelegramFixture([{ error: { status: 400, message: 'bad request' } }]);
    const { emulator } = fixture;
    emulator.userSends({ chatId: 13, text: 'hello' });
    await fixture.event((event) => event.type === 'run.ended' && event.status === 'failed');
    await emulator.until(() => botTexts(fixture as TelegramFixture, 13).length === 1);
    expect(botTexts(fixture, 13)).toEqual([defaultFailureNotice]);
  });

  it('passes a document as a content part, stored in the session workspace and named in the prompt', async () => {
    const root = mkdtempSync(join(tmpdir(), 'agentlanes-grammy-workspace-'));
    try {
      fixture = await startTelegramFixture([{ text: 'Got your notes.' }], {
        runtime: { workspace: { root } },
      });
      const { emulator } = fixture;
      emulator.userSends({
        chatId: 15,
        text: 'see attached',
        document: { name: 'notes.txt', mediaType: 'text/plain', content: 'buy milk' },
      });
      await emulator.until(() => botTexts(fixture as TelegramFixture, 15).length === 1);
      const prompt = String(fixture.model.requests[0]?.messages.at(-1)?.content);
      expect(prompt).toContain('see attached');
      const path = /saved at (\S+notes\.txt)\]/.exec(prompt)?.[1] ?? '';
      expect(path.startsWith(join(root, 'telegram:15'))).toBe(true);
      expect(readFileSync(path, 'utf8')).toBe('buy milk');
      expect(JSON.stringify(fixture.model.requests)).not.toContain(fixture.emulator.token);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('keeps a forum topic its own session and answers in the topic', async () => {
    fixture = await startTelegramFixture([{ text: 'In the topic.' }]);
    const { emulator } = fixture;
    emulator.userSends({ chatId: -100555, threadId: 42, text: 'hello topic' });
    await emulator.until(() => botTexts(fixture as TelegramFixture, -100555).length === 1);
    const [reply] = emulator.botMessages(-100555);
    expect(reply).toMatchObject({ text: 'In the topic.', threadId: 42 });
    const started = await fixture.event((event) => event.type === 'run.started');
    expect(started.sessionKey).toBe('telegram:-100555:42');
  });

  it('cuts a block longer than Telegram allows into messages under 4096 characters', async () => {
    const paragraph = `${'word '.repeat(199)}end.`;
    const text = Array.from({ length: 6 }, () => paragraph).join('\n\n');
    fixture = await startTelegramFixture([{ text }], {
      runtime: { blocks: { minChars: 9000, maxChars: 9000 } },
    });
    const { emulator } = fixture;
    emulator.userSends({ chatId: 11, text: 'long please' });
    await fixture.event((event) => event.type === 'run.ended');
    await emulator.until(() => botTexts(fixture as TelegramFixture, 11).join('\n\n').length >= text.length);
    const sent = botTexts(fixture, 11);
    expect(sent.length).toBe(2);
    for (const message of sent) expect(message.length).toBeLessThanOrEqual(4096);
    expect(sent.join('\n\n')).toBe(text);
  });
});
