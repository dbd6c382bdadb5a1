import type { Hono } from 'hono';
import { z } from 'zod';
import type { RuntimeEvent } from '../core/index.js';
import type { Runtime } from '../runtime/index.js';
import { requireUnscoped } from './auth.js';
import { requireCapability } from './capabilities.js';
import { readQuery } from './http-errors.js';
import type { ServerEnv } from './server-env.js';
import type { ServerConfig } from './server-options.js';

/** What the activity route uses. */
export interface ActivityRouteDeps {
  readonly runtime: Runtime;
  readonly config: Pick<ServerConfig, 'clock'>;
}

/** One recorded event, reduced to what a rate chart and a "last activity" column need. */
export interface ActivityEvent {
  readonly at: number;
  readonly type: RuntimeEvent['type'];
  readonly sessionKey: string;
  /** A lane wait's length (ms), on `lane.waited`. */
  readonly waitedMs?: number;
}

/** `GET /v1/activity`: the recorded events of the last `seconds`, and the cursor to follow the stream from. */
export interface ActivityResponse {
  /** The server clock (ms) when the answer was read. */
  readonly now: number;
  /** Open `GET /v1/events?after=<cursor>` to go on without a gap or a repeat. */
  readonly cursor: number;
  readonly events: readonly ActivityEvent[];
}

/** The longest look back (five minutes: the dashboard's chart). */
const maxSeconds = 300;
/**
 * How many events back from the end of the log a read goes at most, so a busy log costs a bounded read: past it the
 * chart starts where the read did.
 */
const maxEvents = 20_000;

const secondsSchema = z.coerce.number().int().min(1).max(maxSeconds).optional();

/** The events recorded after `from` up to `until` (cursors), in order, of the last `sinceAt` ms on. */
async function recentEvents(
  runtime: Runtime,
  range: { readonly from: number; readonly until: number; readonly sinceAt: number },
  signal: AbortSignal,
): Promise<ActivityEvent[]> {
  const found: ActivityEvent[] = [];
  if (range.until <= range.from) return found;
  const stop = new AbortController();
  const abort = (): void => stop.abort();
  signal.addEventListener('abort', abort, { once: true });
  try {
    for await (const event of runtime.events({ after: range.from, signal: stop.signal })) {
      if (event.cursor > range.until) break;
      if (event.at >= range.sinceAt) {
        const waited = event.type === 'lane.waited' ? { waitedMs: event.waitedMs } : {};
        found.push({ at: event.at, type: event.type, sessionKey: event.sessionKey, ...waited });
      }
      if (event.cursor >= range.until) break;
    }
  } finally {
    signal.removeEventListener('abort', abort);
    stop.abort();
  }
  return found;
}

/**
 * `GET /v1/activity?seconds=300` (unscoped tokens, like `/v1/stats`): the events recorded in the last minutes, each
 * as its time, type and session, so a page opened now shows the traffic before it and each session's last
 * activity, then follows `GET /v1/events?after=<cursor>` from where this answer ends.
 */
export function mountActivityRoutes(app: Hono<ServerEnv>, deps: ActivityRouteDeps): void {
  const { runtime, config } = deps;
  app.get('/v1/activity', requireUnscoped, requireCapability('read'), async (c) => {
    const seconds = readQuery('seconds', c.req.query('seconds'), secondsSchema) ?? maxSeconds;
    const now = config.clock.now();
    const cursor = runtime.eventCursor();
    const events = await recentEvents(
      runtime,
      { from: Math.max(0, cursor - maxEvents), until: cursor, sinceAt: now - seconds * 1000 },
      c.req.raw.signal,
    );
    const body: ActivityResponse = { now, cursor, events };
    return c.json(body);
  });
}
