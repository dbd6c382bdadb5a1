/**
 * A Telegram bot on agentlanes and grammY: replies go out exactly once, even across a crash or restart.
 *
 *   npm run build && TELEGRAM_BOT_TOKEN=123:abc npx tsx examples/telegram-bot.ts
 *
 * With OPENAI_API_KEY set it answers with gpt-4o-mini; without, a scripted model answers (no key needed).
 * TELEGRAM_API_ROOT points it at another Bot API server (a local one, or a test emulator).
 */
import { Bot } from 'grammy';
import { createRuntime, createSqliteLedger, type RuntimeOptions } from 'agentlanes';
import { openaiProvider } from 'agentlanes/openai';
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

/** Aborted on SIGINT/SIGTERM: ends the wait for the Bot API and the polling. */
const shutdown = new AbortController();

/** Wait `ms`, or less once shutting down. */
const pause = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      shutdown.signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    shutdown.signal.addEventListener('abort', done, { once: true });
  });

/**
 * Ask the Bot API who the bot is, one attempt at a time, saying each failure and how long it waits before the next
 * (grammY's own start retries silently). Resolves false when a shutdown ended the wait.
 */
async function connect(): Promise<boolean> {
  for (let attempt = 1, delayMs = 1000; !shutdown.signal.aborted; attempt++) {
    try {
      // grammY types its signal as its abort-controller shim's; Node's own signal is what it gets at run time.
      bot.botInfo = await bot.api.getMe(shutdown.signal as Parameters<typeof bot.api.getMe>[0]);
      return true;
    } catch (error) {
      if (shutdown.signal.aborted) break;
      const reason = error instanceof Error ? error.message : String(error);
      console.log(`Bot API not reachable (attempt ${attempt}: ${reason}); retrying in ${delayMs / 1000} s`);
      await pause(delayMs);
      delayMs = Math.min(delayMs * 2, 60_000);
    }
  }
  return false;
}

let stopping: Promise<void> | undefined;
const stop = (signal: string): Promise<void> =>
  (stopping ??= (async () => {
    console.log(`${signal}: stopping`);
    shutdown.abort();
    // Confirming the last update needs the Bot API; unreachable, the next start gets those updates again.
    if (bot.isRunning()) await bot.stop().catch(() => undefined);
    await delivery.stop();
    await runtime.close();
    await ledger.close();
  })());
process.once('SIGINT', () => void stop('SIGINT'));
process.once('SIGTERM', () => void stop('SIGTERM'));

if (await connect()) {
  try {
    await bot.start({ onStart: (me) => console.log(`@${me.username} is listening`) });
  } catch (error) {
    // A stop during start aborts grammY's own retries ("Aborted delay"): that is the shutdown, not a failure.
    if (!shutdown.signal.aborted) throw error;
  }
}
await stopping;
