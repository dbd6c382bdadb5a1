/**
 * The process the crash test kills: a runtime on a SQLite file under load. Run as
 * `node --import tsx test/crash/child.ts <dbPath> <seed>`.
 *
 * stdin, one JSON command a line:
 *   {"op":"send","session":"s3","id":"s3-m17","text":"…","mode":"followup"|"collect"}
 *   {"op":"cancel","session":"s3","id":"s3-m17"}
 *   {"op":"plan","session":"p0","id":"p0-7"}       a two-step plan of work tool calls (b after a)
 * stdout, one JSON line each:
 *   {"ready":true}                                   once the runtime is created
 *   {"ack":"s3-m17","disposition":"queued",…}        only after send() resolved (the message is durable)
 *   {"cancel":"s3-m17","removed":true}               only after queue.cancel() resolved
 *   {"failed":"s3-m17","code":"…","message":"…"}     a send or cancel that rejected
 *   {"toolStart":"run_7/w-42-3"}                     a tool call starting (written before it does anything)
 *   {"inDoubt":"run_7/w-42-3"}                       a tool call (or plan step) found in doubt after a crash (the
 *                                                    child, as the operator, answers it with a rejection)
 * It never exits on its own while stdin is open; when stdin ends it closes the runtime and exits 0.
 */
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { createRuntime, defineTool, type Session } from '../../src/index.js';
import { seededRandom, systemClock } from '../../src/public/clock.js';
import { type ModelRequest } from '../../src/public/providers.js';
import { scriptedModel, type ScriptEntry } from '../../src/testing/index.js';

const commandSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('send'),
    session: z.string(),
    id: z.string(),
    text: z.string(),
    mode: z.enum(['followup', 'collect']),
  }),
  z.object({ op: z.literal('cancel'), session: z.string(), id: z.string() }),
  z.object({ op: z.literal('plan'), session: z.string(), id: z.string() }),
]);
type Command = z.infer<typeof commandSchema>;

const [dbPath, seedText] = process.argv.slice(2);
if (dbPath === undefined || seedText === undefined) {
  process.stderr.write('usage: child.ts <dbPath> <seed>\n');
  process.exit(2);
}
const random = seededRandom(Number(seedText));
const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

/** One line to the parent. Writes to a pipe are synchronous on Linux, so a line written is a line delivered. */
function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const work = defineTool({
  name: 'work',
  description: 'Pretend to do some work for a while',
  input: z.object({ ms: z.number().int().min(0) }),
  execute: async ({ ms }, { signal, runId, toolCallId }) => {
    report({ toolStart: `${runId}/${toolCallId}` });
    await systemClock.sleep(ms, signal);
    return `worked ${ms} ms`;
  },
});

let calls = 0;
/** Streams slowly; about a third of the runs call the tool first, then answer. Call ids are unique across children. */
function script(request: ModelRequest): ScriptEntry {
  const last = request.messages[request.messages.length - 1];
  if (last?.role !== 'tool' && random() < 0.35) {
    const id = `w-${seedText}-${++calls}`;
    return { toolCalls: [{ id, name: 'work', args: { ms: between(5, 40) } }], tokenDelayMs: between(5, 15) };
  }
  const words = Array.from({ length: between(3, 12) }, (_, index) => `word${index}`);
  return { text: words.join(' '), tokenDelayMs: between(5, 15) };
}

const runtime = createRuntime({
  ledger: { path: dbPath },
  providers: { scripted: scriptedModel(script, { record: false }) },
  model: { provider: 'scripted', model: 'slow' },
  tools: [work],
  queue: { mode: 'followup', debounceMs: 10, maxWaitMs: 50 },
  globalLane: { concurrency: 4 },
  onError: (error) => {
    process.stderr.write(`background failure: ${error instanceof Error ? error.stack : String(error)}\n`);
  },
});
report({ ready: true });

/**
 * The operator: every call in doubt (found by recovery now, or left waiting by an earlier child) is answered with a
 * rejection, so its run goes on telling the model the outcome is unknown; a plan step in doubt is rejected once its
 * plan is paused (its plan goes on without it). Replays the whole log at start.
 */
async function answerInDoubt(): Promise<void> {
  // A set per run: a plan resumed again after a kill that cut its pause announces the same step in doubt twice.
  const planSteps = new Map<string, Set<string>>();
  for await (const event of runtime.events()) {
    const { runId } = event;
    if (runId === undefined) continue;
    const session = runtime.session(event.sessionKey);
    if (event.type === 'run.paused' && planSteps.has(runId)) {
      void rejectPlanSteps(session, runId, [...(planSteps.get(runId) ?? [])]);
      planSteps.delete(runId);
    }
    if (event.type !== 'tool.in_doubt') continue;
    report({ inDoubt: `${runId}/${event.toolCallId}` });
    if (event.sessionKey.startsWith('p')) {
      planSteps.set(runId, new Set(planSteps.get(runId)).add(event.toolCallId));
      continue;
    }
    await session.approve({ toolCallId: event.toolCallId, decision: 'reject' }).catch(() => undefined); // answered already (by an earlier child), or no longer waiting
  }
}

/** Reject a paused plan's steps in doubt; its pause may not be recorded yet when run.paused is out, so retry. */
async function rejectPlanSteps(session: Session, runId: string, stepIds: string[]): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const answered = await session.approvePlan({ runId, reject: stepIds }).then(
      () => true,
      (error: unknown) => {
        const message = String((error as { message?: unknown }).message);
        if (message.includes('not waiting')) return false;
        process.stderr.write(`operator: approvePlan(${runId}) failed: ${message}\n`); // in the failure's log
        return true;
      },
    );
    if (answered) return;
    await systemClock.sleep(10);
  }
}
void answerInDoubt().catch(() => undefined);

function failure(id: string, error: unknown): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return { failed: id, code: typeof code === 'string' ? code : 'unknown', message: String(error) };
}

async function perform(command: Command): Promise<void> {
  const session = runtime.session(command.session);
  try {
    if (command.op === 'plan') {
      const steps = [
        { id: 'a', tool: 'work', args: { ms: between(5, 40) } },
        { id: 'b', tool: 'work', args: { ms: between(5, 40) }, dependsOn: ['a'] },
      ];
      // A plan may be refused while the previous one waits for the operator: that is not a lost message.
      void session.executePlan({ steps }).catch(() => undefined);
    } else if (command.op === 'send') {
      const result = await session.send({ id: command.id, text: command.text }, { mode: command.mode });
      report({ ack: command.id, ...result });
    } else {
      report({ cancel: command.id, removed: await session.queue.cancel(command.id) });
    }
  } catch (error) {
    report(failure(command.id, error));
  }
}

const inFlight = new Set<Promise<void>>();
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const parsed = commandSchema.safeParse(JSON.parse(line));
  if (!parsed.success) {
    process.stderr.write(`bad command: ${line}\n`);
    return;
  }
  const done = perform(parsed.data).finally(() => inFlight.delete(done));
  inFlight.add(done);
});
lines.on('close', () => {
  void Promise.all(inFlight)
    .then(() => runtime.close())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
});
