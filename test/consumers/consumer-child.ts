/**
 * A bot process the consumer crash test kills: a runtime on a SQLite file whose runs stream tokens, read by a
 * durable consumer. Run as `node --import tsx test/consumers/consumer-child.ts <dbPath> <sessions>`.
 *
 * It sends one message to each of `<sessions>` sessions and one to `chat:hang`, whose run never ends (none when 0),
 * then follows `runtime.events({ consumer:
 * 'replies' })`, writing one JSON line per event as it is received: {"cursor","type","seq","sessionKey","runId",
 * "status"?}, then "handles" it for a few milliseconds before asking for the next. {"ready":true} first.
 */
import { createRuntime } from '../../src/index.js';
import { systemClock } from '../../src/public/clock.js';
import { scriptedModel } from '../../src/testing/index.js';

const [dbPath, sessionsText] = process.argv.slice(2);
if (dbPath === undefined || sessionsText === undefined) {
  process.stderr.write('usage: consumer-child.ts <dbPath> <sessions>\n');
  process.exit(2);
}

const words = Array.from({ length: 40 }, (_, index) => `token${index}`).join(' ');
const runtime = createRuntime({
  ledger: { path: dbPath },
  providers: {
    // The session told to hang keeps its run open until the process dies, so a kill always cuts a run off.
    scripted: scriptedModel(
      (request) =>
        request.messages.at(-1)?.content === 'hang' ? { hang: true } : { text: words, tokenDelayMs: 10 },
      { record: false },
    ),
  },
  model: { provider: 'scripted', model: 'slow' },
  queue: { mode: 'followup', debounceMs: 0, maxWaitMs: 0 },
  // This suite follows a consumer's cursor across a kill: the runs the kill cut are closed at restart (the hanging
  // one would hang again if resumed). Resuming is what test/crash and the recovery tests cover.
  recovery: { crashedRuns: 'close' },
  onError: (error) => process.stderr.write(`background failure: ${String(error)}\n`),
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const sessions = Number(sessionsText);
for (let index = 0; index < sessions; index++) {
  void runtime.session(`chat:${index}`).send({ id: `m${index}`, text: 'tell me something' });
}
if (sessions > 0) void runtime.session('chat:hang').send({ id: 'hang', text: 'hang' });

for await (const event of runtime.events({ consumer: 'replies' })) {
  const status = event.type === 'run.ended' ? { status: event.status } : {};
  const line = {
    cursor: event.cursor,
    type: event.type,
    seq: event.seq,
    sessionKey: event.sessionKey,
    ...status,
  };
  process.stdout.write(`${JSON.stringify({ ...line, runId: event.runId ?? null })}\n`);
  await systemClock.sleep(1);
}
