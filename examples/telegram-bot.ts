/**
 * A Telegram bot on agentlanes and grammY: replies go out exactly once, even across a crash or restart.
 *
 *   npm run build && TELEGRAM_BOT_TOKEN=123:abc npx tsx examples/telegram-bot.ts
 *
 * With OPENAI_API_KEY set it answers with gpt-4o-mini; without, a scripted model answers (no key needed).
 * TELEGRAM_API_ROOT points it at another Bot API server (a local one, or a test emulator).
 */
import { Bot } from 'grammy';
import { createRuntime, createSqliteLedger, openaiProvider, type RuntimeOptions } from 'agentlanes';
import { connectGrammy } from 'agentlanes/grammy';
import { scriptedModel } from 'agentlanes/testing';

const token = process.env.TELEGRAM_BOT_TOKEN;
if (token === undefined) throw new Error('Set TELEGRAM_BOT_TOKEN (from @BotFather).');

const model: Pick<RuntimeOptions, 'providers' | 'model' | 'authProfiles'> = !process.env.OPENAI_API_KEY
  ? {
      providers: {
        scripted: scriptedModel((request) => ({
          text: `You said: ${String(request.messages.at(-1)?.content)} (set OPENAI_API_KEY for real answers)`,
        })),
      },
      model: { provider: 'scripted', model: 'echo' },
    }
  : {
      providers: { openai: openaiProvider({ baseURL: 'https://api.openai.com/v1' }) },
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      authProfiles: [{ id: 'oa-1', provider: 'openai', type: 'api_key', secret: { env: 'OPENAI_API_KEY' } }],
    };

// The adapter records its deliveries in the runtime's own ledger, so it gets the same instance.
const ledger = createSqliteLedger({ path: './telegram-bot.db' });
const runtime = createRuntime({
  ledger,
  ...model,
  queue: { mode: 'collect', debounceMs: 1500 }, // messages sent while it answers become one next run
  systemPrompt: 'You are a helpful assistant in a Telegram chat. Answer briefly.',
});

const apiRoot = process.env.TELEGRAM_API_ROOT;
const bot = new Bot(token, apiRoot === undefined ? {} : { client: { apiRoot } });
// Session telegram:<chat id> (plus :<topic id>), /stop aborts, typing while it streams, 4096-char chunks.
const { delivery } = connectGrammy(bot, { runtime, ledger });

const stop = async (): Promise<void> => {
  await bot.stop();
  await delivery.stop();
  await runtime.close();
  await ledger.close();
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
await bot.start({ onStart: (me) => console.log(`@${me.username} is listening`) });
