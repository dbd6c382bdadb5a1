import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import {
  createMemoryLedger,
  createRuntime,
  type Runtime,
  type RuntimeEvent,
  type RuntimeOptions,
} from 'agentlanes';
import { sequentialIds } from 'agentlanes/clock';
import { createServer, type ListeningServer, type ServerOptions } from 'agentlanes/server';
import {
  fakeClock,
  scriptedModel,
  type FakeClock,
  type Script,
  type ScriptedModel,
} from 'agentlanes/testing';

/** The unscoped token every harness accepts. */
export const adminToken = 'admin-token-0123456789';
/** A token scoped to `web:` sessions. */
export const webToken = 'web-token-0123456789ab';

/** A runtime on the fake clock and a scripted model, served over a real loopback socket. */
export interface ServerHarness {
  readonly runtime: Runtime;
  readonly clock: FakeClock;
  readonly model: ScriptedModel;
  readonly server: ListeningServer;
  /** `fetch` against the server with the admin token (or `token`, or none with `token: null`). */
  request(path: string, init?: RequestInit & { token?: string | null; json?: unknown }): Promise<Response>;
  /** Close the server, then the runtime. */
  close(): Promise<void>;
}

/** Build a harness; `runtimeOptions` and `serverOptions` override the defaults. */
export async function startServer(
  script: Script,
  runtimeOptions: Partial<RuntimeOptions> = {},
  serverOptions: ServerOptions = {},
  existing?: { clock: FakeClock },
): Promise<ServerHarness> {
  const clock = existing?.clock ?? fakeClock({ now: 1_700_000_000_000 });
  const model = scriptedModel(script, { clock });
  const runtime = createRuntime({
    ledger: createMemoryLedger(),
    providers: { scripted: model },
    model: { provider: 'scripted', model: 'm' },
    clock,
    ids: sequentialIds(),
    random: () => 0.5,
    ...runtimeOptions,
  });
  const { listen } = createServer(runtime, {
    auth: { tokens: [{ token: adminToken }, { token: webToken, sessionKeyPrefixes: ['web:'] }] },
    clock,
    dashboard: false,
    ...serverOptions,
  });
  const server = await listen({ port: 0 });
  return {
    runtime,
    clock,
    model,
    server,
    request(path, init = {}) {
      const { token = adminToken, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (token !== null) headers.set('authorization', `Bearer ${token}`);
      if (json !== undefined) headers.set('content-type', 'application/json');
      return fetch(`${server.url}${path}`, {
        ...rest,
        headers,
        ...(json === undefined ? {} : { body: JSON.stringify(json) }),
      });
    },
    async close() {
      await server.close();
      const closing = runtime.close();
      await clock.runAll();
      await closing;
    },
  };
}

/** The SSE messages of a response, parsed by eventsource-parser; comments and `retry:` values are collected. */
export function sseMessages(
  response: Response,
  seen: { comments?: string[]; retries?: number[] } = {},
): AsyncIterableIterator<EventSourceMessage> {
  if (response.body === null) throw new Error('no body');
  const stream = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(
    new EventSourceParserStream({
      onComment: (comment) => seen.comments?.push(comment),
      onRetry: (retry) => seen.retries?.push(retry),
    }),
  );
  return stream[Symbol.asyncIterator]();
}

/** Read SSE messages until `until` says stop (inclusive); the events among them, parsed. */
export async function readEvents(
  messages: AsyncIterableIterator<EventSourceMessage>,
  until: (event: RuntimeEvent) => boolean,
): Promise<{ events: RuntimeEvent[]; ids: string[] }> {
  const events: RuntimeEvent[] = [];
  const ids: string[] = [];
  for (;;) {
    const next = await messages.next();
    if (next.done === true) return { events, ids };
    if (next.value.event !== undefined) continue;
    const event = JSON.parse(next.value.data) as RuntimeEvent;
    events.push(event);
    ids.push(next.value.id ?? '');
    if (until(event)) return { events, ids };
  }
}

/**
 * Let real event-loop turns pass until the fake clock holds `count` timers (a request the server is handling
 * armed one): how a test knows a `wait` request reached the runtime before it moves time.
 */
export async function untilTimers(clock: FakeClock, count: number): Promise<void> {
  for (let turn = 0; clock.pendingTimers() < count; turn++) {
    if (turn > 10_000) throw new Error(`the clock never held ${count} timers`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
