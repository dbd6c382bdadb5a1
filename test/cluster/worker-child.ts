/**
 * One worker of a cluster test: a runtime on the test's Postgres schema, in its own process. Run as
 * `node --import tsx test/cluster/worker-child.ts <schema> <name> <optionsJson>` with an IPC channel.
 *
 * The model answers by the last user message: `slow:<ms>` streams five words over that long, `hang` waits until
 * aborted on worker `a` (another worker answers `resumed`, so a run taken over from `a` resumes to an end), `refund` asks for the high-risk `refund` tool (then says `refunded`), anything else is echoed back.
 * Every model call is reported as `{ type: 'call', worker, text, start, end }` (the last user message, wall-clock
 * ms) once it ends, and as `{ type: 'calling', worker, text }` when it starts.
 *
 * IPC in: `{ id, session, method, args }` calls `runtime.session(session)[method](...args)` (`queue.cancel` and
 * `queue.clear` too); `{ id, op: 'close' }` closes the runtime. IPC out: `{ id, value }` or `{ id, error: { code,
 * message } }`; `{ type: 'ready' }` once the runtime is created.
 */
import { z } from 'zod';
import { createRuntime, defineTool, isRuntimeError, type ModelProvider } from '../../src/index.js';
import { type ModelRequest } from '../../src/public/providers.js';
import { scriptedModel, type ScriptEntry } from '../../src/testing/index.js';

const postgresUrl = process.env.AGENTLANES_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/test';
const [schema, name, optionsJson] = process.argv.slice(2);
if (schema === undefined || name === undefined) {
  process.stderr.write('usage: worker-child.ts <schema> <name> [optionsJson]\n');
  process.exit(2);
}
const extra = JSON.parse(optionsJson ?? '{}') as { concurrency?: number; leaseMs?: number };

const send = (message: object): void => {
  process.send?.(message);
};

function lastUserText(request: ModelRequest): string {
  const users = request.messages.filter((message) => message.role === 'user');
  return users.at(-1)?.content ?? '';
}

function entryFor(request: ModelRequest): ScriptEntry {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: 'refunded' };
  const text = lastUserText(request);
  const slow = /^slow:(\d+)$/u.exec(text);
  if (slow !== null) return { text: 'one two three four five', tokenDelayMs: Number(slow[1]) / 5 };
  if (text === 'hang') return name === 'a' ? { hang: true } : { text: 'resumed' };
  if (text === 'refund') return { toolCalls: [{ name: 'refund', args: { orderId: 'o1' } }] };
  return { text: `echo ${text}` };
}

/** The scripted model, reporting each call's wall-clock span to the driver. */
function recordingModel(): ModelProvider {
  const inner = scriptedModel((request) => entryFor(request));
  return {
    async *stream(request, options) {
      const start = Date.now();
      const text = lastUserText(request);
      send({ type: 'calling', worker: name, text });
      try {
        yield* inner.stream(request, options);
      } finally {
        send({ type: 'call', worker: name, text, start, end: Date.now() });
      }
    },
  };
}

const refund = defineTool({
  name: 'refund',
  description: 'Refund an order',
  risk: 'high',
  input: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => Promise.resolve({ refunded: orderId }),
});

/**
 * A plan step that never ends on worker a (it dies meanwhile) and ends at once on any other. Idempotent: run again
 * after a takeover, it is not in doubt. Reported to the driver as a call with the text `step:hold`.
 */
const hold = defineTool({
  name: 'hold',
  description: 'Hold a plan step',
  input: z.object({}),
  idempotent: true,
  execute: () => {
    send({ type: 'calling', worker: name, text: 'step:hold' });
    return name === 'a' ? new Promise<string>(() => undefined) : Promise.resolve(`held on ${name}`);
  },
});

const runtime = createRuntime({
  ledger: { postgres: { connectionString: postgresUrl, schema } },
  // Plan steps run on the worker that holds the plan, so a step is cut with its worker.
  cluster: { leaseMs: extra.leaseMs ?? 2_000, scanMs: 250, pollMs: 200, planSteps: 'inline' },
  providers: { scripted: recordingModel() },
  model: { provider: 'scripted', model: 'm' },
  globalLane: { concurrency: extra.concurrency ?? 8 },
  queue: { mode: 'followup', debounceMs: 0 },
  tools: [refund, hold],
  onError: (error) =>
    process.stderr.write(`[${name}] ${error instanceof Error ? error.message : String(error)}\n`),
});

const commandSchema = z.union([
  z.object({ id: z.number(), op: z.literal('close') }),
  z.object({ id: z.number(), session: z.string(), method: z.string(), args: z.array(z.unknown()) }),
]);

async function perform(command: z.infer<typeof commandSchema>): Promise<unknown> {
  if ('op' in command) {
    await runtime.close();
    return null;
  }
  const session = runtime.session(command.session) as unknown as Record<string, unknown>;
  const [owner, method] = command.method.startsWith('queue.')
    ? [session['queue'] as Record<string, unknown>, command.method.slice('queue.'.length)]
    : [session, command.method];
  const call = owner[method] as (...args: unknown[]) => Promise<unknown>;
  return call.apply(owner, command.args);
}

process.on('message', (raw) => {
  const command = commandSchema.parse(raw);
  perform(command).then(
    (value) => {
      send({ id: command.id, value: value ?? null });
      if ('op' in command) process.disconnect();
    },
    (error: unknown) =>
      send({
        id: command.id,
        error: {
          code: isRuntimeError(error) ? error.code : 'internal',
          message: error instanceof Error ? error.message : String(error),
        },
      }),
  );
});
send({ type: 'ready' });
