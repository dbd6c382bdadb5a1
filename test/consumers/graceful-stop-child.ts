/**
 * The README's bot, stopped gracefully: a runtime on a SQLite file whose runs stream long answers, read by the
 * durable consumer `replies`, each `assistant.block` "sent" slowly (like `bot.reply`). On SIGTERM it calls
 * `runtime.close()` and exits once close resolved and the loop ended. Run as
 * `node --import tsx test/consumers/graceful-stop-child.ts <dbPath> <sessions>`.
 *
 * It prints one JSON line per event: {"yielded":cursor,"type","closing"} as the loop receives it, then for blocks
 * {"handling":blockId} and {"handled":blockId} around the slow send; {"closing":true} when SIGTERM arrives,
 * {"closed":true} once close resolved, {"ended":true} when the loop ended (and {"error":message} if it threw).
 */
import { createRuntime } from '../../src/index.js';
import { systemClock } from '../../src/public/clock.js';
import { scriptedModel } from '../../src/testing/index.js';

const [dbPath, sessionsText] = process.argv.slice(2);
if (dbPath === undefined || sessionsText === undefined) {
  process.stderr.write('usage: graceful-stop-child.ts <dbPath> <sessions>\n');
  process.exit(2);
}

const print = (line: object): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};
const answer = Array.from({ length: 250 }, (_, index) => `word${index}`).join(' ');
const runtime = createRuntime({
  ledger: { path: dbPath },
  providers: { scripted: scriptedModel(() => ({ text: answer, tokenDelayMs: 1 }), { record: false }) },
  model: { provider: 'scripted', model: 'slow' },
  onError: (error) => process.stderr.write(`background failure: ${String(error)}\n`),
});

// A consumer waiting for events holds no handle of its own: a bot has its chat connection; this stands in for it.
const keepAlive = setInterval(() => undefined, 60_000);
let closing = false;
let closed: Promise<void> | undefined;
process.once('SIGTERM', () => {
  closing = true;
  print({ closing: true });
  closed = runtime.close().then(() => print({ closed: true }));
});

const sessions = Number(sessionsText);
for (let index = 0; index < sessions; index++) {
  void runtime.session(`chat:${index}`).send({ id: `m${index}`, text: 'tell me a lot' });
}
print({ ready: true });

try {
  for await (const event of runtime.events({ consumer: 'replies' })) {
    print({ yielded: event.cursor, type: event.type, closing });
    if (event.type !== 'assistant.block') continue;
    print({ handling: event.blockId });
    await systemClock.sleep(150);
    print({ handled: event.blockId });
  }
  print({ ended: true });
} catch (error) {
  print({ error: error instanceof Error ? error.message : String(error) });
}
await closed;
clearInterval(keepAlive);
process.exit(0);
