/**
 * A Telegram bot process the restart test kills: grammY polling the emulator, connected to a runtime on a SQLite
 * file. Run as `node --import tsx test/adapters/grammy-child.ts <apiRoot> <token> <dbPath>`; prints
 * {"ready":true} once polling; SIGTERM stops it cleanly. A message "long" gets a slow reply of numbered sentences in many small blocks;
 * any other message a short one.
 */
import { Bot } from 'grammy';
import { createRuntime, createSqliteLedger } from '../../src/index.js';
import { connectGrammy } from '../../src/adapters/grammy/index.js';
import { scriptedModel } from '../../src/testing/index.js';

const [apiRoot, token, dbPath] = process.argv.slice(2);
if (apiRoot === undefined || token === undefined || dbPath === undefined) {
  process.stderr.write('usage: grammy-child.ts <apiRoot> <token> <dbPath>\n');
  process.exit(2);
}

/** The long reply: sentence n reads "Sentence n of the long answer." */
export const longAnswer = Array.from(
  { length: 40 },
  (_, index) => `Sentence ${index} of the long answer.`,
).join(' ');

const ledger = createSqliteLedger({ path: dbPath, synchronous: 'normal' });
const runtime = createRuntime({
  ledger,
  providers: {
    scripted: scriptedModel(
      (request) => {
        const text = String(request.messages.at(-1)?.content);
        return text === 'long' ? { text: longAnswer, tokenDelayMs: 15 } : { text: `Answer to ${text}.` };
      },
      { record: false },
    ),
  },
  model: { provider: 'scripted', model: 'slow' },
  blocks: { minChars: 30, maxChars: 60 },
  onError: (error) => process.stderr.write(`runtime: ${String(error)}\n`),
});
const bot = new Bot(token, { client: { apiRoot } });
bot.catch((error) => process.stderr.write(`bot: ${String(error.error)}\n`));
const connection = connectGrammy(bot, {
  runtime,
  ledger,
  onError: (error) => process.stderr.write(`delivery: ${String(error)}\n`),
});
// SIGTERM: a clean stop (polling, then the delivery loop with its position, then the runtime and the ledger).
process.once('SIGTERM', () => {
  void (async () => {
    await bot.stop();
    await connection.delivery.stop();
    await runtime.close();
    await ledger.close();
    process.exit(0);
  })();
});
void bot.start({
  timeout: 30,
  onStart: () => {
    process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  },
});
