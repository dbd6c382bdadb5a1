import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatFixture, type ChatFixture } from './chat-fixture.js';

let fixture: ChatFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

/** What a Telegram user reads: MarkdownV2 escapes removed. */
const unescaped = (text: string): string => text.replace(/\\([_*[\]()~`>#+\-=|{}.!\\])/g, '$1');

describe('connectChat', () => {
  it('streams a reply into one message by editing it, and aborts on /stop', async () => {
    fixture = await startChatFixture([
      { text: 'The first part of it. The second part here. And the third one ends.' },
      { hang: true },
    ]);
    const { emulator } = fixture;
    emulator.userSends({ chatId: 31, text: 'explain' });
    await fixture.event((event) => event.type === 'run.ended');
    await emulator.until(() =>
      unescaped(emulator.botMessages(31)[0]?.text ?? '').includes('third one ends.'),
    );
    const [reply, ...others] = emulator.botMessages(31);
    expect(others).toEqual([]);
    expect(reply?.edits).toBeGreaterThan(0);
    expect(unescaped(reply?.text ?? '')).toBe(
      'The first part of it.\n\nThe second part here.\n\nAnd the third one ends.',
    );
    const started = await fixture.event((event) => event.type === 'run.started');
    expect(started.sessionKey).toBe('telegram:31');
    emulator.userSends({ chatId: 31, text: 'another' });
    await fixture.event((event) => event.type === 'run.started' && event.runId !== started.runId);
    emulator.userSends({ chatId: 31, text: '/stop' });
    const aborted = await fixture.event((event) => event.type === 'run.ended' && event.status === 'aborted');
    expect(aborted).toMatchObject({ sessionKey: 'telegram:31' });
  });

  it('passes a document as a content part, fetched through the platform adapter, stored in the session workspace', async () => {
    const root = mkdtempSync(join(tmpdir(), 'agentlanes-chat-sdk-workspace-'));
    try {
      fixture = await startChatFixture([{ text: 'Got your notes.' }], { runtime: { workspace: { root } } });
      const { emulator } = fixture;
      emulator.userSends({
        chatId: 36,
        text: 'see attached',
        document: { name: 'notes.txt', mediaType: 'text/plain', content: 'buy milk' },
      });
      await fixture.event((event) => event.type === 'run.ended' && event.sessionKey === 'telegram:36');
      const prompt = String(fixture.model.requests[0]?.messages.at(-1)?.content);
      expect(prompt).toContain('see attached');
      const path = /saved at (\S+notes\.txt)\]/.exec(prompt)?.[1] ?? '';
      expect(path.startsWith(join(root, 'telegram:36'))).toBe(true);
      expect(readFileSync(path, 'utf8')).toBe('buy milk');
      // The file was fetched through the adapter: the bot token in Telegram's file URL never reached the model.
      expect(JSON.stringify(fixture.model.requests)).not.toContain(emulator.token);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('takes a message sent while the reply streams into the running run (steer mode)', async () => {
    fixture = await startChatFixture(
      [{ text: 'Checking the forecast now.', tokenDelayMs: 100 }, { text: 'In Celsius: 21.' }],
      { adapter: { sendOptions: { mode: 'steer' }, format: 'raw' } },
    );
    const { emulator, clock } = fixture;
    emulator.userSends({ chatId: 34, text: 'weather?' });
    await fixture.event((event) => event.type === 'run.started');
    emulator.userSends({ chatId: 34, text: 'in celsius please' });
    await fixture.event((event) => event.type === 'message.steered');
    await clock.advance(1000);
    await fixture.event((event) => event.type === 'run.ended');
    await emulator.until(() => (emulator.botMessages(34)[0]?.text ?? '').includes('21.'));
    expect(fixture.model.requests).toHaveLength(2);
    expect(fixture.model.requests[1]?.messages.at(-1)).toMatchObject({ content: 'in celsius please' });
    expect(emulator.botMessages(34).map((message) => message.text)).toEqual([
      'Checking the forecast now.\n\nIn Celsius: 21.',
    ]);
  });

  it('posts each block as its own message without streaming, and answers a redelivered update once', async () => {
    fixture = await startChatFixture(
      [{ text: 'Block number one here. Block number two here.' }, { text: 'never' }],
      { adapter: { stream: false, format: 'raw' } },
    );
    const { emulator } = fixture;
    const update = emulator.userSends({ chatId: 32, text: 'hello' });
    await fixture.event((event) => event.type === 'run.ended');
    await emulator.until(() => emulator.botMessages(32).length === 2);
    emulator.redeliver(update);
    emulator.userSends({ chatId: 33, text: 'marker' });
    await fixture.event((event) => event.type === 'run.ended' && event.sessionKey === 'telegram:33');
    expect(emulator.botMessages(32).map((message) => message.text)).toEqual([
      'Block number one here.',
      'Block number two here.',
    ]);
    expect(
      fixture.model.requests.filter((request) => request.messages.at(-1)?.content === 'hello'),
    ).toHaveLength(1);
  });

  it('aborts the streaming run when /stop comes tagged as a bot_command, as Telegram sends it', async () => {
    fixture = await startChatFixture([{ text: 'A long answer that keeps going.', tokenDelayMs: 100 }]);
    const { emulator } = fixture;
    emulator.userSends({ chatId: 37, text: 'tell me everything' });
    await fixture.event((event) => event.type === 'assistant.delta');
    const stop = emulator.userSends({ chatId: 37, text: '/stop@lanes_bot' });
    expect(stop.message.entities).toEqual([{ type: 'bot_command', offset: 0, length: 15 }]);
    const ended = await fixture.event((event) => event.type === 'run.ended');
    expect(ended).toMatchObject({ sessionKey: 'telegram:37', status: 'aborted' });
  });

  it('gives the session any other command as text when the platform tags it as a command', async () => {
    fixture = await startChatFixture([{ text: 'Here is some help.' }]);
    const { emulator } = fixture;
    emulator.userSends({ chatId: 38, text: '/help me please' });
    const received = await fixture.event((event) => event.type === 'message.received');
    expect(received).toMatchObject({ sessionKey: 'telegram:38', text: '/help me please' });
    await emulator.until(() => unescaped(emulator.botMessages(38)[0]?.text ?? '') === 'Here is some help.');
  });

  it('delivers a 4000-character answer full of characters MarkdownV2 escapes whole, across messages, nothing in doubt', async () => {
    const answer = 'Step a_b-c (see v1.2)! '.repeat(175).trim();
    fixture = await startChatFixture([{ text: answer }], {
      runtime: { blocks: { minChars: 3500, maxChars: 4000 } },
    });
    const { emulator } = fixture;
    emulator.userSends({ chatId: 39, text: 'the long one' });
    await fixture.event((event) => event.type === 'run.ended');
    const whole = answer.replace(/\s+/g, '');
    const read = (): string =>
      emulator
        .botMessages(39)
        .map((message) => unescaped(message.text))
        .join('')
        .replace(/\s+/g, '');
    await emulator.until(() => read() === whole);
    const messages = emulator.botMessages(39);
    expect(messages.length).toBeGreaterThan(1);
    for (const message of messages) expect(message.text.endsWith('\\.\\.\\.')).toBe(false);
    expect(fixture.events.filter((event) => event.type === 'delivery.in_doubt')).toEqual([]);
  });

  it("streams many blocks of escaped text into messages under Telegram's limit, each block once", async () => {
    const answer = 'Point x_y-z (v2.0)! '.repeat(400).trim();
    fixture = await startChatFixture([{ text: answer }], {
      runtime: { blocks: { minChars: 600, maxChars: 900 } },
    });
    const { emulator } = fixture;
    emulator.userSends({ chatId: 40, text: 'the longer one' });
    await fixture.event((event) => event.type === 'run.ended');
    const whole = answer.replace(/\s+/g, '');
    const read = (): string =>
      emulator
        .botMessages(40)
        .map((message) => unescaped(message.text))
        .join('')
        .replace(/\s+/g, '');
    await emulator.until(() => read() === whole);
    expect(emulator.botMessages(40).length).toBeGreaterThan(1);
    expect(fixture.events.filter((event) => event.type === 'delivery.in_doubt')).toEqual([]);
  });
});
