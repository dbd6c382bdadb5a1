import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import { RuntimeError, type ErrorCode } from '../../src/core/errors.js';

const childPath = join(import.meta.dirname, 'worker-child.ts');

/** A model call a worker reported: its wall-clock span. */
export interface ModelCall {
  readonly worker: string;
  /** The last user message of the call's request. */
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** A worker process of a cluster test (see worker-child.ts). */
export interface Worker {
  readonly name: string;
  readonly process: ChildProcess;
  /** Resolves once the worker created its runtime. */
  readonly ready: Promise<void>;
  /** Resolves once the process is gone. */
  readonly exited: Promise<void>;
  /** Call `runtime.session(session)[method](...args)` in the worker; rejects with the RuntimeError it threw. */
  call<T = unknown>(session: string, method: string, ...args: unknown[]): Promise<T>;
  /** Close the worker's runtime, then let it exit. */
  close(): Promise<void>;
  signal(signal: NodeJS.Signals): void;
}

type Reply = { id: number; value: unknown } | { id: number; error: { code: ErrorCode; message: string } };

/** A model call starting (`end` undefined) or ended, as the worker reports it. */
export type CallListener = (call: { worker: string; text: string; ended: boolean }) => void;

/** The `application_name` of a worker's connections: its name, and the test's schema (unique on the server). */
export function workerAppName(schema: string, name: string): string {
  return `${name}@${schema}`;
}

/** Start a worker on `schema`; its model calls go to `calls` (and `onCall`), its stderr to `log`. */
export function startWorker(
  schema: string,
  name: string,
  options: {
    calls: ModelCall[];
    log: string[];
    onCall: CallListener;
    concurrency?: number;
    leaseMs?: number;
  },
): Worker {
  const extra = JSON.stringify({ concurrency: options.concurrency, leaseMs: options.leaseMs });
  // Every connection of the worker names it (`application_name`), for the write audit (write-audit.ts).
  const child = spawn(process.execPath, ['--import', 'tsx', childPath, schema, name, extra], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, PGAPPNAME: workerAppName(schema, name) },
  });
  const ready = createDeferred<void>();
  const exited = createDeferred<void>();
  const waiting = new Map<number, Deferred<unknown>>();
  let next = 0;
  child.stderr?.on('data', (chunk: Buffer) => options.log.push(`[${name}] ${chunk.toString()}`));
  type Report =
    { type: 'ready' } | ({ type: 'call' } & ModelCall) | { type: 'calling'; worker: string; text: string };
  child.on('message', (message: Reply | Report) => {
    if ('type' in message) {
      if (message.type === 'ready') ready.resolve();
      else {
        if (message.type === 'call') options.calls.push({ ...message });
        options.onCall({ worker: message.worker, text: message.text, ended: message.type === 'call' });
      }
      return;
    }
    const pending = waiting.get(message.id);
    waiting.delete(message.id);
    if ('error' in message) pending?.reject(new RuntimeError(message.error.code, message.error.message));
    else pending?.resolve(message.value);
  });
  child.on('exit', () => {
    ready.reject(new Error(`worker ${name} exited before it was ready`));
    for (const pending of waiting.values()) pending.reject(new Error(`worker ${name} exited`));
    waiting.clear();
    exited.resolve();
  });
  ready.promise.catch(() => undefined);
  const send = <T>(message: object): Promise<T> => {
    const id = ++next;
    const reply = createDeferred<unknown>();
    waiting.set(id, reply);
    child.send({ id, ...message });
    return reply.promise as Promise<T>;
  };
  return {
    name,
    process: child,
    ready: ready.promise,
    exited: exited.promise,
    call: (session, method, ...args) => send({ session, method, args }),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await send({ op: 'close' }).catch(() => undefined);
      await exited.promise;
    },
    signal: (signal) => child.kill(signal),
  };
}
