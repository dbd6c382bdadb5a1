import { Bot } from 'grammy';
import {
  createRuntime,
  createSqliteLedger,
  type Ledger,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { connectGrammy, type GrammyAdapterOptions, type GrammyConnection } from 'agentlanes/grammy';
import {
  fakeClock,
  scriptedModel,
  type FakeClock,
  type Script,
  type ScriptedModel,
} from 'agentlanes/testing';
import { startTelegramEmulator, type TelegramEmulator } from '../support/telegram-emulator.js';
import { tempLedgerPath } from '../support/temp-ledger.js';

/** A grammY bot on the emulator, connected to a runtime on a SQLite file (fake clock, scripted model). */
export interface TelegramFixture {
  readonly emulator: TelegramEmulator;
  readonly runtime: ReturnType<typeof createRuntime>;
  readonly ledger: Ledger;
  readonly clock: FakeClock;
  readonly model: ScriptedModel;
  readonly connection: GrammyConnection;
  readonly events: RuntimeEvent[];
  /** The SQLite file of the ledger (read it after `close`, or start again on it). */
  readonly ledgerPath: string;
  /** Resolves once an event matching `check` was emitted (durable). */
  event(check: (event: RuntimeEvent) => boolean): Promise<RuntimeEvent>;
  close(): Promise<void>;
}

/** Start the emulator, the runtime and a polling grammY bot connected to it. */
export async function startTelegramFixture(
  script: Script,
  options: {
    runtime?: Partial<RuntimeOptions>;
    adapter?: Partial<GrammyAdapterOptions>;
    emulator?: TelegramEmulator;
    /** The ledger file (another fixture's, to start again on it). */
    ledgerPath?: string;
    /** The clock (another fixture's, so time goes on across a restart). */
    clock?: FakeClock;
  } = {},
): Promise<TelegramFixture> {
  const emulator = options.emulator ?? (await startTelegramEmulator());
  const clock = options.clock ?? fakeClock({ now: 1_000_000 });
  const model = scriptedModel(script, { clock });
  // NORMAL survives a killed process (WAL); only power loss could lose the last commits.
  const ledgerPath = options.ledgerPath ?? tempLedgerPath('grammy');
  const ledger = createSqliteLedger({ path: ledgerPath, synchronous: 'normal' });
  const runtime = createRuntime({
    ledger,
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    clock,
    ids: sequentialIds(),
    random: () => 0.5,
    // Stored parts go beside the ledger, never into the working directory the tests run in.
    workspace: { root: `${ledgerPath}-workspace` },
    ...options.runtime,
  });
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
  const bot = new Bot(emulator.token, { client: { apiRoot: emulator.apiRoot } });
  const connection = connectGrammy(bot, {
    runtime,
    ledger,
    clock,
    apiRoot: emulator.apiRoot,
    ...options.adapter,
  });
  const polling = bot.start({ timeout: 30, drop_pending_updates: false });
  return {
    emulator,
    runtime,
    ledger,
    clock,
    model,
    connection,
    events,
    ledgerPath,
    event(check) {
      const found = events.find(check);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.add({ check, resolve }));
    },
    async close() {
      await bot.stop();
      await polling;
      await connection.delivery.stop();
      controller.abort();
      await runtime.close();
      await recorded;
      await ledger.close();
      if (options.emulator === undefined) await emulator.close();
    },
  };
}

/** The bot's texts in a chat, in order. */
export function botTexts(fixture: TelegramFixture, chatId: number): string[] {
  return fixture.emulator.botMessages(chatId).map((message) => message.text);
}
