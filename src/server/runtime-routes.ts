import type { Hono } from 'hono';
import { z } from 'zod';
import type { Runtime, SessionPage, SessionSummary } from '../runtime/index.js';
import { sessionPageLimit } from '../actors/index.js';
import { requireUnscoped } from './auth.js';
import { capabilities, grantCovers, requireCapability, type Grant } from './capabilities.js';
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
/** The page size of `GET /v1/sessions` without `?limit=` (the runtime's own default). */
const defaultPageLimit = 100;
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
 * Where a scan of the keys in order goes on from `position` (exclusive) to reach the next key the prefixes may
 * cover: `position` itself when it is covered or nothing is read yet below a prefix, a point just below the next
 * prefix above it, or undefined when no prefix lies ahead. Skipping is only a shortcut: every key read is filtered.
 */
function resumePoint(prefixes: readonly string[], position: string | undefined): string | undefined {
  if (position !== undefined && prefixes.some((prefix) => position.startsWith(prefix))) return position;
  const ahead = prefixes.filter((prefix) => position === undefined || prefix > position).sort();
  const next = ahead[0];
  if (next === undefined) return undefined;
  const below = justBelow(next);
  return position === undefined || below > position ? below : position;
}

/**
 * A string below every key that starts with `prefix` and close under it: the prefix with its last character one
 * lower and `\uffff` after (its parent prefix when that character cannot be lowered).
 */
function justBelow(prefix: string): string {
  const head = prefix.slice(0, -1);
  const last = prefix.charCodeAt(prefix.length - 1);
  const lowerable = last > 0 && (last < 0xd800 || last > 0xdfff);
  return lowerable ? `${head}${String.fromCharCode(last - 1)}\uffff` : head;
}

/**
 * A page of only the sessions `grant` covers: the runtime's pages are read on, skipping between the token's
 * prefixes, until `limit` covered keys and one more are found (or the keys run out), so neither the page, nor
 * its `next` (always a key of the page), nor its length tells anything of the keys outside the scope.
 */
async function scopedSessionPage(
  runtime: Runtime,
  grant: Grant,
  limit: number,
  after: string | undefined,
): Promise<SessionPage> {
  const prefixes = grant.sessionKeyPrefixes;
  if (prefixes === undefined) return runtime.sessions({ limit, ...(after === undefined ? {} : { after }) });
  const found: SessionSummary[] = [];
  let position = after;
  while (found.length <= limit) {
    const from = resumePoint(prefixes, position);
    if (from === undefined) break;
    const page = await runtime.sessions({ limit: sessionPageLimit, after: from });
    for (const session of page.sessions) if (grantCovers(grant, session.key)) found.push(session);
    if (page.next === undefined) break;
    position = page.next;
  }
  const sessions = found.slice(0, limit);
  const last = sessions.at(-1);
  return found.length > limit && last !== undefined ? { sessions, next: last.key } : { sessions };
}

/**
 * `GET /v1/sessions` (paged, only the keys the token covers), `GET /v1/approvals` (every call waiting for an
 * approval or a deferred result), `GET /v1/stats` and `GET /metrics` (runtime-wide: unscoped tokens only).
 */
export function mountRuntimeRoutes(app: Hono<ServerEnv>, deps: RuntimeRouteDeps): void {
  const { runtime } = deps;
  const read = requireCapability('read');
  app.get('/v1/sessions', read, async (c) => {
    const limit = readQuery('limit', c.req.query('limit'), limitSchema);
    const after = readQuery('after', c.req.query('after'), keySchema);
    return c.json(await scopedSessionPage(runtime, c.get('grant'), limit ?? defaultPageLimit, after));
  });
  app.get('/v1/capabilities', (c) => {
    const grant = c.get('grant');
    const can = capabilities.filter((capability) => grant.can.has(capability));
    const { sessionKeyPrefixes, role } = grant;
    const scope = sessionKeyPrefixes === undefined ? {} : { sessionKeyPrefixes };
    return c.json({ can, ...scope, ...(role === undefined ? {} : { role }) });
  });
  app.get('/v1/approvals', read, async (c) => {
    const grant = c.get('grant');
    const calls = await runtime.pendingCalls();
    return c.json({ pending: calls.filter((call) => grantCovers(grant, call.sessionKey)) });
  });
  app.get('/v1/stats', requireUnscoped, read, async (c) =>
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
  app.get('/metrics', requireUnscoped, read, (c) => {
    const text = renderMetrics({ ...deps, clock: deps.config.clock });
    return c.text(text, 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
}
