/**
 * The process the mixed crash suite kills: a runtime on a SQLite file under a mixed workload, with an operator
 * that approves high-risk calls and supplies deferred results from a durable event consumer. Run as
 * `node --import tsx test/crash-mixed/mixed-child.ts <dbPath> <seed> <label>`.
 *
 * stdin: one `MixedCommand` a line; stdout: one `MixedLine` a line (see mixed-protocol.ts). Tools append side
 * records to `<dbPath>.side.jsonl`. It never exits on its own while stdin is open; when stdin ends it closes the
 * runtime and exits 0.
 */
import { createInterface } from 'node:readline';
import { createRuntime, isRuntimeError, type RuntimeEvent } from '../../src/index.js';
import { seededRandom, systemClock } from '../../src/public/clock.js';
import { scriptedModel } from '../../src/testing/index.js';
import { mixedCommandSchema, sidePathOf, type MixedCommand, type MixedLine } from './mixed-protocol.js';
import { createPlan, createScript, createSideLog, createTools } from './mixed-tools.js';

const [dbPath, seedText, label] = process.argv.slice(2);
if (dbPath === undefined || seedText === undefined || label === undefined) {
  process.stderr.write('usage: mixed-child.ts <dbPath> <seed> <label>\n');
  process.exit(2);
}
const random = seededRandom(Number(seedText));
const between = (low: number, high: number): number => low + Math.floor(random() * (high - low + 1));

/** One line to the parent. Writes to a pipe are synchronous on Linux, so a line written is a line delivered. */
function report(line: MixedLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const side = createSideLog(sidePathOf(dbPath), label);
const runtime = createRuntime({
  ledger: { path: dbPath },
  providers: { scripted: scriptedModel(createScript(random, label), { record: false }) },
  model: { provider: 'scripted', model: 'mixed' },
  tools: createTools(side),
  queue: { mode: 'followup', debounceMs: 10, maxWaitMs: 50 },
  globalLane: { concurrency: 8 },
  limits: { interruptWaitMs: 5_000 },
  onError: (error) => {
    report({ background: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  },
});
report({ ready: true });

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'unknown';
}

/**
 * The operator's answer to one event: approve a call or a plan step, supply a deferred result. Awaited before the
 * next event is pulled, so a kill re-delivers the event being handled (the consumer is at-least-once); a re-delivered
 * event whose call no longer waits is refused with `not_found` / `invalid_input`, reported as stale. Each answer
 * names the request it answers (`approvalId`): a call a kill cut in doubt is asked again under a new id, so the
 * re-delivered approval of its first request is refused instead of running it a second time.
 */
async function operate(event: RuntimeEvent): Promise<void> {
  if (event.type === 'tool.in_doubt') return rejectInDoubt(event);
  if (event.type !== 'approval.requested' && event.type !== 'tool.deferred') return;
  const session = runtime.session(event.sessionKey);
  const { runId = '', toolCallId, tool } = event;
  const context = { sessionKey: event.sessionKey, runId, toolCallId };
  await systemClock.sleep(between(2, 20));
  try {
    if (event.type === 'tool.deferred') {
      await session.supplyToolResult({ toolCallId, output: { answer: `for ${toolCallId}` } });
      side('supplied', tool, context);
    } else if (event.stepId !== undefined) {
      const approvalIds = [event.approvalId ?? event.stepId];
      const result = await session.approvePlan({ runId, stepIds: [event.stepId], approvalIds });
      side('approved', tool, context);
      report({ plan: `resumed:${runId}`, runId, status: result.status });
    } else {
      await session.approve({ toolCallId, approvalId: event.approvalId ?? toolCallId, decision: 'approve' });
      side('approved', tool, context);
    }
  } catch (error) {
    if (isRuntimeError(error, 'not_found') || isRuntimeError(error, 'invalid_input')) {
      report({ stale: `${runId}/${toolCallId}`, code: codeOf(error) });
    } else if (!isRuntimeError(error, 'runtime_closed')) {
      report({ failed: `${runId}/${toolCallId}`, code: codeOf(error), message: String(error) });
    }
  }
}

/**
 * A call a kill cut in doubt is never approved (that would run it a second time): the operator rejects it, so the
 * model hears its outcome is unknown (a plan step: the plan records it failed). Its `approval.requested`, which
 * follows, then finds it settled (stale).
 */
async function rejectInDoubt(event: RuntimeEvent & { type: 'tool.in_doubt' }): Promise<void> {
  const session = runtime.session(event.sessionKey);
  try {
    const approvalId = event.approvalId ?? event.toolCallId;
    if (event.stepId === undefined)
      await session.approve({ toolCallId: event.toolCallId, approvalId, decision: 'reject' });
    else
      await session.approvePlan({
        runId: event.runId ?? '',
        reject: [event.stepId],
        approvalIds: [approvalId],
      });
  } catch (error) {
    if (isRuntimeError(error, 'runtime_closed')) return;
    report({ stale: `${event.runId ?? ''}/${event.toolCallId}`, code: codeOf(error) });
  }
}

const operator = (async () => {
  const types = ['tool.in_doubt', 'approval.requested', 'tool.deferred'] as const;
  const events = runtime.events({ consumer: 'operator', types: [...types] });
  for await (const event of events) await operate(event);
})().catch((error: unknown) => {
  if (!isRuntimeError(error, 'runtime_closed'))
    report({ failed: 'operator', code: codeOf(error), message: String(error) });
});

async function perform(command: MixedCommand): Promise<void> {
  const session = runtime.session(command.session);
  try {
    if (command.op === 'send') {
      const result = await session.send({ id: command.id, text: command.text }, { mode: command.mode });
      report({ ack: command.id, ...result });
    } else {
      const result = await session.executePlan(createPlan(command.id, command.risky), { mode: 'auto' });
      report({ plan: command.id, runId: result.runId, status: result.status });
    }
  } catch (error) {
    // A plan is refused while the session's chat run is paused: an answer, like a rejected message.
    if (command.op === 'plan' && isRuntimeError(error, 'rejected_busy'))
      report({ plan: command.id, runId: '', status: 'rejected_busy' });
    else report({ failed: command.id, code: codeOf(error), message: String(error) });
  }
}

const inFlight = new Set<Promise<void>>();
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const parsed = mixedCommandSchema.safeParse(JSON.parse(line));
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
    .then(() => operator)
    .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${error instanceof Error ? error.stack : String(error)}\n`);
        process.exit(1);
      },
    );
});
