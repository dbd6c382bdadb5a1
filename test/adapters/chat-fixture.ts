import { createTelegramAdapter } from '@chat-adapter/telegram';
import { createMemoryState } from '@chat-adapter/state-memory';
import { Chat, ConsoleLogger, type Adapter, type Logger } from 'chat';
import {
  createRuntime,
  createSqliteLedger,
  type Ledger,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { connectChat, type ChatSdkAdapterOptions, type ChatSdkConnection } from 'agentlanes/chat-sdk';
import {
  fakeClock,
  scriptedModel,
  type FakeClock,
  type Script,
  type ScriptedModel,
} from 'agentlanes/testing';
import { startTelegramEmulator, type TelegramEmulator } from '../support/telegram-emulator.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A Chat (Telegram adapter, polling the emulator) connected to a runtime on a SQLite file. */
export interface ChatFixture {
  readonly emulator: TelegramEmulator;
  readonly clock: FakeClock;
  readonly model: ScriptedModel;
  readonly connection: ChatSdkConnection;
  readonly events: RuntimeEvent[];
  /** The SQLite file of the ledger (read it after `close`). */
  readonly ledgerPath: string;
  event(check: (event: RuntimeEvent) => boolean): Promise<RuntimeEvent>;
  close(): Promise<void>;
}

/** What else a Chat fixture may be started with. */
export interface ChatFixtureSetup {
  readonly adapter?: Partial<ChatSdkAdapterOptions>;
  readonly runtime?: Partial<RuntimeOptions>;
  /** An emulator the test started (kept open at `close`). */
  readonly emulator?: TelegramEmulator;
  /** The ledger file (another fixture's, to start again on it). */
  readonly ledgerPath?: string;
  /** The clock (another fixture's, so time goes on across a restart). */
  readonly clock?: FakeClock;
  /** The Telegram adapter's logger. @default silent */
  readonly logger?: Logger;
}

/** Start the emulator (unless given), the runtime and a polling Chat connected to it. */
export async function startChatFixture(script: Script, setup: ChatFixtureSetup = {}): Promise<ChatFixture> {
  const emulator = setup.emulator ?? (await startTelegramEmulator());
  const clock = setup.clock ?? fakeClock({ now: 1_000_000 });
  const model = scriptedModel(script, { clock });
  const ledgerPath = setup.ledgerPath ?? tempLedgerPath('chat-sdk');
  const ledger: Ledger = createSqliteLedger({ path: ledgerPath, synchronous: 'normal' });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    blocks: { minChars: 10, maxChars: 40 },
    clock,
    ids: sequentialIds(),
    // Stored parts go beside the ledger, never into the working directory the tests run in.
    workspace: { root: `${ledgerPath}-workspace` },
    ...setup.runtime,
  });
  const chat = new Chat({
    userName: 'lanes_bot',
    adapters: {
      // The adapter's class has `botUserId: string | undefined`, which chat's `Adapter` refuses under
      // exactOptionalPropertyTypes (a typing mismatch between the two packages, not a runtime one).
      telegram: createTelegramAdapter({
        botToken: emulator.token,
        apiBaseUrl: emulator.apiRoot,
        mode: 'polling',
        userName: 'lanes_bot',
        longPolling: { timeout: 1, deleteWebhook: true },
        logger: setup.logger ?? new ConsoleLogger('silent'),
      }) as Adapter,
    },
    state: createMemoryState(),
    concurrency: 'concurrent',
    logger: 'silent',
  });
  const connection = connectChat(chat, { runtime, ledger, clock, ...setup.adapter });
  const events: RuntimeEvent[] = [];
  const waiters = new Set<{
    check: (event: RuntimeEvent) => boolean;
    resolve: (event: RuntimeEvent) => void;
  }>();
  const controller = new AbortController();
  const recorded = (async () => {
    for await (const event of runtime.events({ signal: controller.signal })) {
      events.push(event);
      for (const waiter of [...waiters]) {
        if (!waiter.check(event)) continue;
        waiters.delete(waiter);
        waiter.resolve(event);
      }
    }
  })();
  await chat.initialize();
  return {
    emulator,
    clock,
    model,
    connection,
    events,
    ledgerPath,
    event(check) {
      const found = events.find(check);
      return found !== undefined
        ? Promise.resolve(found)
        : new Promise((resolve) => waiters.add({ check, resolve }));
    },
    async close() {
      await chat.shutdown();
      await connection.delivery.stop();
      controller.abort();
      await runtime.close();
      await recorded;
      await ledger.close();
      if (setup.emulator === undefined) await emulator.close();
    },
  };
}
