import type { Hono } from 'hono';
import { z } from 'zod';
import type { Runtime, SessionSummary } from '../runtime/index.js';
import { sessionPageLimit } from '../runtime/runtime-queries.js';
import { grantCovers, requireUnscoped } from './auth.js';
import { readQuery } from './http-errors.js';
import { renderMetrics, type RuntimeCounters } from './metrics.js';
import type { OpenStreams } from './open-streams.js';
import type { ServerEnv } from './server-env.js';
import type { ServerConfig } from './server-options.js';

/** What the runtime-wide routes read. */
export interface RuntimeRouteDeps {
  readonly runtime: Runtime;
  readonly config: ServerConfig;
  readonly streams: OpenStreams;
  readonly counters: RuntimeCounters;
}

const limitSchema = z
  .string()
  .regex(/^\d{1,4}$/, 'limit is a whole number')
  .transform(Number)
  .pipe(z.int().min(1).max(sessionPageLimit))
  .optional();
const keySchema = z.string().min(1).max(512).optional();

/** Every session, page by page: how many there are, by state. */
async function sessionTotals(runtime: Runtime): Promise<{ total: number; byState: Record<string, number> }> {
  const byState: Record<string, number> = {};
  let total = 0;
  let after: string | undefined;
  do {
    const page = await runtime.sessions({
      limit: sessionPageLimit,
      ...(after === undefined ? {} : { after }),
    });
    for (const session of page.sessions) byState[session.state] = (byState[session.state] ?? 0) + 1;
    total += page.sessions.length;
    after = page.next;
  } while (after !== undefined);
  return { total, byState };
}

/**
 * `GET /v1/sessions` (paged, only the keys the token covers), `GET /v1/approvals` (every call waiting for an
 * approval or a deferred result), `GET /v1/stats` and `GET /metrics` (runtime-wide: unscoped tokens only).
 */
export function mountRuntimeRoutes(app: Hono<ServerEnv>, deps: RuntimeRouteDeps): void {
  const { runtime } = deps;
  app.get('/v1/sessions', async (c) => {
    const limit = readQuery('limit', c.req.query('limit'), limitSchema);
    const after = readQuery('after', c.req.query('after'), keySchema);
    const page = await runtime.sessions({
      ...(limit === undefined ? {} : { limit }),
      ...(after === undefined ? {} : { after }),
    });
    const grant = c.get('grant');
    const sessions = page.sessions.filter((session: SessionSummary) => grantCovers(grant, session.key));
    return c.json({ sessions, ...(page.next === undefined ? {} : { next: page.next }) });
  });
  app.get('/v1/approvals', async (c) => {
    const grant = c.get('grant');
    const calls = await runtime.pendingCalls();
    return c.json({ pending: calls.filter((call) => grantCovers(grant, call.sessionKey)) });
  });
  app.get('/v1/stats', requireUnscoped, async (c) =>
    c.json({
      ...runtime.stats(),
      sessions: await sessionTotals(runtime),
      eventStreams: {
        open: deps.streams.size,
        opened: deps.streams.opened,
        slowClients: deps.streams.slowClients,
      },
    }),
  );
  app.get('/metrics', requireUnscoped, (c) => {
    const text = renderMetrics({ ...deps, clock: deps.config.clock });
    return c.text(text, 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
}
