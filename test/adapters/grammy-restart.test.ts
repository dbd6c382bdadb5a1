import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { storedEventRows } from '../support/sqlite-statements.js';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultInterruptedNotice } from 'agentlanes/grammy';
import { startTelegramEmulator, type TelegramEmulator } from '../support/telegram-emulator.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

const childPath = join(import.meta.dirname, 'grammy-child.ts');
/** The child's reply to "long" (grammy-child.ts). */
const longAnswer = Array.from({ length: 40 }, (_, index) => `Sentence ${index} of the long answer.`).join(
  ' ',
);
const children: ChildProcess[] = [];
let emulator: TelegramEmulator | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await emulator?.close();
  emulator = undefined;
});

/** Start the bot process; resolves once it polls. */
function startBot(dbPath: string): Promise<ChildProcess> {
  const { apiRoot, token } = emulator as TelegramEmulator;
  const child = spawn(process.execPath, ['--import', 'tsx', childPath, apiRoot, token, dbPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const log: string[] = [];
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => log.push(chunk));
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the bot exited (code ${code}): ${log.join('')}`)));
  });
}

/** Send a signal and wait until the process is gone. */
async function end(child: ChildProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await gone;
}

interface BlockRow {
  run_id: string;
  session_key: string;
  body: string;
}

describe('connectGrammy across a SIGKILL', () => {
  it('delivers no block twice and answers in full when the bot is killed mid-reply and its run resumes', async () => {
    emulator = await startTelegramEmulator();
    const dbPath = tempLedgerPath('grammy-restart');
    const first = await startBot(dbPath);
    emulator.userSends({ chatId: 2, text: 'short question' });
    await emulator.until(() => (emulator as TelegramEmulator).botMessages(2).length === 1);
    emulator.userSends({ chatId: 1, text: 'long' });
    await emulator.until(() => (emulator as TelegramEmulator).botMessages(1).length >= 3);
    await end(first, 'SIGKILL');
    const beforeRestart = emulator.botMessages(1).length;
    // Written while the bot is down: it must be answered after the restart.
    emulator.userSends({ chatId: 3, text: 'anyone there' });
    const second = await startBot(dbPath);
    const lastSentence = longAnswer.slice(longAnswer.lastIndexOf('Sentence'));
    await emulator.until(() => {
      const server = emulator as TelegramEmulator;
      const whole = server.botMessages(1).some((message) => message.text.endsWith(lastSentence));
      return whole && server.botMessages(3).length === 1;
    });
    await end(second, 'SIGTERM');

    expect(emulator.botMessages(2).map((message) => message.text)).toEqual(['Answer to short question.']);
    expect(emulator.botMessages(3).map((message) => message.text)).toEqual(['Answer to anyone there.']);
    const chatOne = emulator.botMessages(1).map((message) => message.text);
    // The run resumed: no "interrupted" notice; the model call it was cut in was made again, so after the blocks
    // delivered before the kill (each once) the chat shows the whole answer.
    expect(chatOne.filter((text) => text === defaultInterruptedNotice)).toHaveLength(0);
    expect(chatOne.length).toBeGreaterThan(beforeRestart);
    expect(chatOne.join(' ').endsWith(longAnswer)).toBe(true);
    const shown = chatOne.join(' ');

    const database = new Database(dbPath, { readonly: true });
    try {
      const stored = storedEventRows(database);
      const blocks = stored.filter((row) => row.type === 'assistant.block') as BlockRow[];
      const deliveries = database.prepare('SELECT * FROM deliveries').all() as {
        run_id: string;
        block_index: number;
        status: string;
        platform_message_id: string | null;
      }[];
      const doubts = stored.filter((row) => row.type === 'delivery.in_doubt');
      const runs = database.prepare('SELECT run_id, status FROM runs').all() as {
        run_id: string;
        status: string;
      }[];
      expect(runs.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
      const sent = deliveries.filter((row) => row.status === 'delivered');
      // Each block went out under one platform message, never two blocks (or one block twice) under one.
      expect(new Set(sent.map((row) => row.platform_message_id)).size).toBe(sent.length);
      const everyText = [2, 1, 3].flatMap((chatId) => (emulator as TelegramEmulator).botMessages(chatId));
      for (const block of blocks) {
        const { index, text } = JSON.parse(block.body) as { index: number; text: string };
        const record = deliveries.find((row) => row.run_id === block.run_id && row.block_index === index);
        // Every block recorded is delivered (once, under the recorded message id) or reported in doubt.
        expect(record?.status === 'delivered' || record?.status === 'in_doubt').toBe(true);
        if (record?.status === 'delivered') {
          const message = everyText.find((sent) => String(sent.messageId) === record.platform_message_id);
          expect(message?.text).toBe(text);
        }
      }
      const inDoubt = deliveries.filter((row) => row.status === 'in_doubt');
      expect(doubts).toHaveLength(inDoubt.length);
      // The chat shows the cut answer's blocks in order: every delivered one, an in-doubt one at most once.
      const chatOneBlocks = blocks
        .filter((block) => block.session_key === 'telegram:1')
        .map((block) => ({
          runId: block.run_id,
          ...(JSON.parse(block.body) as { index: number; text: string }),
        }));
      const delivered = chatOneBlocks.filter((block) =>
        deliveries.some(
          (row) =>
            row.run_id === block.runId && row.block_index === block.index && row.status === 'delivered',
        ),
      );
      expect(delivered.length).toBeGreaterThan(0);
      const shownBlocks = chatOneBlocks.filter((block) => shown.includes(block.text));
      expect(shownBlocks.map((block) => block.text).join(' ')).toBe(shown);
      for (const block of delivered) expect(shownBlocks).toContainEqual(block);
    } finally {
      database.close();
    }
    // Almost all of it is starting two node processes that compile the sources (like test/consumers' crash test).
  }, 60_000);
});
