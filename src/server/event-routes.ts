import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { z } from 'zod';
import { toErrorInfo } from '../core/index.js';
import { eventTypes, type EventType, type RuntimeEvent } from '../core/index.js';
import { eventStreamStarted } from '../events/index.js';
import type { EventStreamOptions, Runtime } from '../runtime/index.js';
import { redeemStreamTicket, requireSessionScope } from './auth.js';
import { grantCovers, requireCapability } from './capabilities.js';
import { closeFrame, createFrameWriter, type FrameWriter } from './frame-writer.js';
import { errorResponse, readBody, readQuery } from './http-errors.js';
import type { OpenStreams } from './open-streams.js';
import type { ServerEnv } from './server-env.js';
import type { ServerConfig } from './server-options.js';
import type { StreamTickets } from './stream-tickets.js';

/** What the event routes use. */
export interface EventRouteDeps {
  readonly runtime: Runtime;
  readonly config: ServerConfig;
  readonly streams: OpenStreams;
}

/** What the event routes use on top: the stream tickets. */
export interface EventStreamDeps extends EventRouteDeps {
  readonly tickets: StreamTickets;
}

/** `POST /v1/stream-tickets`: the stream the ticket opens (absent: `GET /v1/events`). */
const ticketBodySchema = z.object({ sessionKey: z.string().min(1).max(512).optional() }).strict();

const cursorSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'a cursor is a whole number')
  .transform(Number);
const afterSchema = z.union([z.literal('now'), cursorSchema]).optional();
const typesSchema = z
  .string()
  .transform((text) => text.split(','))
  .pipe(z.array(z.enum(eventTypes as [EventType, ...EventType[]])))
  .optional();

/**
 * Where a stream starts: `Last-Event-ID` (what a reconnecting client sends) wins over `?after=`; neither is the
 * start of the log. Which types it carries: `?types=a,b`. Bad values throw `invalid_input` before streaming.
 */
function streamStart(c: Context<ServerEnv>): Pick<EventStreamOptions, 'after' | 'types'> {
  const lastId = c.req.header('last-event-id');
  const after =
    lastId === undefined
      ? readQuery('after', c.req.query('after'), afterSchema)
      : readQuery('Last-Event-ID', lastId, cursorSchema);
  const types = readQuery('types', c.req.query('types'), typesSchema);
  return { ...(after === undefined ? {} : { after }), ...(types === undefined ? {} : { types }) };
}

/** Frames already built, by event: a live event goes to every client following it as the same object. */
const frames = new WeakMap<RuntimeEvent, string>();

/** One event as an SSE frame: `id:` is its cursor, `data:` the event as JSON (one line). */
export function eventFrame(event: RuntimeEvent): string {
  let frame = frames.get(event);
  if (frame === undefined) {
    frame = `id: ${event.cursor}\ndata: ${JSON.stringify(event)}\n\n`;
    frames.set(event, frame);
  }
  return frame;
}

/** Open a frame writer over the stream, tracked in the open streams until `forget`. */
export function openWriter(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  stream: Parameters<Parameters<typeof streamSSE>[1]>[0],
  shutdownFrame?: string,
): { writer: FrameWriter; forget: () => void } {
  const { config, streams } = deps;
  const options = shutdownFrame === undefined ? config : { ...config, shutdownFrame };
  const { outgoing } = c.env;
  const writer = createFrameWriter(stream, options, {
    disconnect: () => outgoing?.destroy(),
    onSlowClient: () => streams.countSlowClient(),
    // The response's writableLength counts its own buffer and its socket's: what the client has not read yet.
    backlog: () => outgoing?.writableLength ?? 0,
    onDrain: (listener) => {
      outgoing?.on('drain', listener);
      return () => outgoing?.off('drain', listener);
    },
  });
  const untrack = streams.add({ end: (reason) => writer.end(reason) });
  return {
    writer,
    forget: () => {
      writer.stop();
      untrack();
    },
  };
}

/**
 * Stream `open`'s events to the client as SSE frames until the client leaves, is cut, or the stream ends. A start
 * the runtime refuses (a cursor past the end of the log) answers 400 before streaming, so an EventSource stops
 * instead of reconnecting forever: a probe stream is checked and dropped un-iterated (it holds nothing).
 */
async function streamEvents(
  deps: EventRouteDeps,
  c: Context<ServerEnv>,
  open: (options: EventStreamOptions) => AsyncIterable<RuntimeEvent>,
  accepts: (event: RuntimeEvent) => boolean,
): Promise<Response> {
  const start = streamStart(c);
  await eventStreamStarted(open(start));
  const response = streamSSE(c, async (stream) => {
    const { writer, forget } = openWriter(deps, c, stream);
    const lease = c.get('streamLease');
    // A ticket's reconnect window opens as soon as the client is gone, not once the loop below notices.
    writer.signal.addEventListener('abort', () => lease?.release(), { once: true });
    try {
      await writer.write(`retry: ${deps.config.retryMs}\n\n`);
      for await (const event of open({ ...start, signal: writer.signal })) {
        if (writer.signal.aborted) break;
        if (accepts(event)) await writer.write(eventFrame(event));
      }
      // The runtime closed: the stream ran out on its own.
      if (!writer.signal.aborted) await writer.write(closeFrame('runtime_closed'));
    } catch (error) {
      await writer.write(`event: error\ndata: ${JSON.stringify(toErrorInfo(error))}\n\n`);
    } finally {
      forget();
      lease?.release();
    }
  });
  // Neither stored by a cache nor named to another site: a ticket may ride in the URL.
  response.headers.set('cache-control', 'no-store');
  response.headers.set('referrer-policy', 'no-referrer');
  return response;
}

/**
 * `GET /v1/events` (every session the token covers) and `GET /v1/sessions/:key/events`: the runtime's events as
 * Server-Sent Events, resumable from `Last-Event-ID` or `?after=` with no gap and no repeat (the runtime replays
 * from the ledger, then follows live). Both take a bearer token or a `?ticket=` from `POST /v1/stream-tickets`.
 */
export function mountEventRoutes(app: Hono<ServerEnv>, deps: EventStreamDeps): void {
  const { runtime, tickets } = deps;
  app.post('/v1/stream-tickets', requireCapability('read'), async (c) => {
    const { sessionKey } = await readBody(c, ticketBodySchema);
    const grant = c.get('grant');
    if (sessionKey !== undefined && !grantCovers(grant, sessionKey)) {
      return errorResponse(c, 403, 'forbidden', 'this token does not cover that session key');
    }
    return c.json(tickets.issue(grant, { sessionKey }), 201);
  });
  const redeem = redeemStreamTicket(tickets);
  const read = requireCapability('read');
  app.get('/v1/events', redeem, read, (c) => {
    const grant = c.get('grant');
    return streamEvents(
      deps,
      c,
      (options) => runtime.events(options),
      (event) => grantCovers(grant, event.sessionKey),
    );
  });
  app.get('/v1/sessions/:key/events', redeem, requireSessionScope, read, (c) => {
    const session = runtime.session(c.req.param('key'));
    return streamEvents(
      deps,
      c,
      (options) => session.events(options),
      () => true,
    );
  });
}
