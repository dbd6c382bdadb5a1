/**
 * What the README's blocks take from the reader's own code, for running them in a child process: an emulated chat
 * `bot` (messages in as JSON lines on stdin, replies out as JSON lines on stdout), `fetchOrder`, `payments`, an
 * `operator` who approves, `myProvider` (a scripted model that answers by the message's words), `options`, and a
 * `runtime` and `chat` with the tools the plans block names. Imported first by each generated snippet module.
 */
import { createInterface, type Interface } from 'node:readline';
import {
  createMemoryLedger,
  createRuntime,
  defineTool,
  type EventOf,
  type Runtime,
  type RuntimeOptions,
  type Session,
} from 'agentlanes';
import { scriptedModel, type ScriptEntry, type ScriptedRequest } from 'agentlanes/testing';
import { z } from 'zod';

/** One JSON line on stdout: what the test reads. */
export function report(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(record)}\n`);
}

/** What the reader's code was asked to do, in order ('refund A7', 'cancel r-A7', …). */
export const calls: string[] = [];

function record(call: string): void {
  calls.push(call);
  report({ call });
}

/** The model: a tool result is answered with it; otherwise the user's words pick the answer. */
function answer(request: ScriptedRequest): ScriptEntry {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `Done: ${last.content}` };
  const text = last?.role === 'user' ? last.content : '';
  if (/\bfail\b/.test(text)) return { error: { status: 400, message: 'invalid request' } };
  if (/\brefund\b/.test(text)) return { toolCalls: [{ name: 'refund', args: { orderId: 'A7', amount: 5 } }] };
  if (/\border\b/.test(text)) return { toolCalls: [{ name: 'lookup_order', args: { orderId: 'A7' } }] };
  if (/\bslow\b/.test(text)) return { text: 'A slow answer.' };
  return { text: 'Hello! How can I help?' };
}

interface ChatMessage {
  id: number;
  text: string;
  chat: { id: number };
  from: { id: number };
}

const terminated = new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
let lines: Interface | undefined;

/** A chat framework's bot: a reply whose text says "slow" is still being sent when SIGTERM comes. */
const bot = {
  on(_event: 'message', handler: (message: ChatMessage) => Promise<unknown>): void {
    lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      handler(JSON.parse(line) as ChatMessage).catch((error: unknown) =>
        report({ handlerError: String(error) }),
      );
    });
  },
  async reply(sessionKey: string, text: string, options?: { idempotencyKey?: string }): Promise<void> {
    if (/slow/.test(text)) {
      report({ replying: text });
      await terminated;
    }
    report({ reply: { sessionKey, text, idempotencyKey: options?.idempotencyKey } });
  },
  stop(): Promise<void> {
    lines?.close();
    process.stdin.destroy();
    report({ stopped: true });
    return Promise.resolve();
  },
};

const payments = {
  refund(orderId: string, amount: number, _options: { signal: AbortSignal }): Promise<{ refundId: string }> {
    record(`refund ${orderId} ${amount}`);
    return Promise.resolve({ refundId: `r-${orderId}` });
  },
  cancelRefund(refundId: string): Promise<void> {
    record(`cancel ${refundId}`);
    return Promise.resolve();
  },
};

const operator = {
  confirm(question: string): Promise<boolean> {
    record(`confirm ${question}`);
    return Promise.resolve(true);
  },
};

function fetchOrder(orderId: string, _options: { signal: AbortSignal }): Promise<{ status: string }> {
  return Promise.resolve({ status: `${orderId} shipped` });
}

const myProvider = scriptedModel(answer);

const planTools = [
  defineTool({
    name: 'list_orders',
    description: 'List orders',
    input: z.object({ customer: z.string() }),
    execute: ({ customer }) =>
      Promise.resolve({ items: [{ id: `${customer}-A7` }, { id: `${customer}-B2` }] }),
  }),
  defineTool({
    name: 'refund',
    description: 'Refund an order',
    risk: 'high',
    input: z.object({ orderId: z.string(), amount: z.number() }),
    execute: ({ orderId, amount }, { signal }) => payments.refund(orderId, amount, { signal }),
  }),
  defineTool({
    name: 'send_email',
    description: 'Send an email',
    input: z.object({ body: z.string() }),
    execute: ({ body }) => Promise.resolve(record(`email ${body}`)),
  }),
];

/** The reader's runtime options, with the tools the plans and server blocks use (a high-risk `refund`). */
const options: RuntimeOptions = {
  ledger: createMemoryLedger(),
  providers: { main: myProvider },
  model: { provider: 'main', model: 'gpt-4o-mini' },
  tools: planTools,
};

let shared: Runtime | undefined;

/** The runtime the blocks that name `runtime` or `chat` without creating one use. */
export function sharedRuntime(): Runtime {
  shared ??= createRuntime({ ...options, ledger: createMemoryLedger() });
  return shared;
}

/** The first `run.ended` of a session, replayed or live. */
export async function firstRunEnded(session: Session): Promise<EventOf<'run.ended'>> {
  for await (const event of session.events({ types: ['run.ended'] })) {
    if (event.type === 'run.ended') return event;
  }
  throw new Error('the event stream ended before a run did');
}

Object.assign(globalThis, { bot, fetchOrder, myProvider, options, operator, payments });
Object.defineProperty(globalThis, 'runtime', { configurable: true, get: sharedRuntime });
Object.defineProperty(globalThis, 'chat', {
  configurable: true,
  get: () => sharedRuntime().session('telegram:12345'),
});
