/**
 * A Chat SDK bot on agentlanes (Telegram here; Slack, Teams, Discord… are one adapter away). Replies stream into
 * one message by edits and go out exactly once, even across a restart.
 *
 *   npm run build && TELEGRAM_BOT_TOKEN=123:abc npx tsx examples/chat-sdk-bot.ts
 *
 * With ANTHROPIC_API_KEY set it answers with Claude, else a scripted model. State: `@chat-adapter/state-memory`.
 */
import { createTelegramAdapter } from '@chat-adapter/telegram';
import { createMemoryState } from '@chat-adapter/state-memory';
import { Chat, type Adapter } from 'chat';
import { createRuntime, createSqliteLedger, type RuntimeOptions } from 'agentlanes';
import { anthropicProvider } from 'agentlanes/anthropic';
import { connectChat } from 'agentlanes/chat-sdk';
import { scriptedModel } from 'agentlanes/testing';

const model: Pick<RuntimeOptions, 'providers' | 'model' | 'authProfiles'> = !process.env.ANTHROPIC_API_KEY
  ? {
      providers: {
        scripted: scriptedModel((request) => ({
          text: `You said: ${String(request.messages.at(-1)?.content)}`,
          tokenDelayMs: 50, // streams word by word, so the message is seen growing
        })),
      },
      model: { provider: 'scripted', model: 'echo' },
    }
  : {
      providers: { anthropic: anthropicProvider() },
      model: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      authProfiles: [
        { id: 'an-1', provider: 'anthropic', type: 'api_key', secret: { env: 'ANTHROPIC_API_KEY' } },
      ],
    };

const ledger = createSqliteLedger({ path: './chat-sdk-bot.db' }); // the runtime and the delivery log share it
const runtime = createRuntime({
  ledger,
  ...model,
  systemPrompt: 'You are a helpful assistant. Answer briefly.',
});

const chat = new Chat({
  userName: process.env.BOT_USERNAME ?? 'agentlanes_bot',
  // Reads TELEGRAM_BOT_TOKEN (TELEGRAM_API_BASE_URL: another Bot API server); cast: exactOptionalPropertyTypes.
  adapters: { telegram: createTelegramAdapter({ mode: 'polling' }) as Adapter },
  state: createMemoryState(),
  concurrency: 'concurrent', // agentlanes queues, steers and batches per session itself
});
// Mentions and subscribed threads -> session <adapter>:<thread id>; /stop aborts; replies posted to the thread.
const { delivery } = connectChat(chat, { runtime, ledger });
await chat.initialize(); // listening; Ctrl-C stops

process.once('SIGINT', () => {
  void (async () => {
    await chat.shutdown();
    await delivery.stop();
    await runtime.close();
    await ledger.close();
  })();
});
