import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { emptyGrant, grantCovers, grantIsUnscoped, grantOf, type Grant } from './capabilities.js';
import { errorResponse } from './http-errors.js';
import type { ServerEnv } from './server-env.js';
import type { ServerToken } from './server-options.js';
import type { StreamTickets } from './stream-tickets.js';

export { grantCovers, grantIsUnscoped };

/** A token's SHA-256 digest: equal lengths, so `timingSafeEqual` compares in time independent of the token. */
function digestOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** The 401 answer; it never says which token was tried. */
function unauthorized(c: Context): Response {
  return errorResponse(c, 401, 'unauthorized', 'a valid "Authorization: Bearer <token>" header is required');
}

/** The paths of the event streams (`GET`), the only routes a stream ticket opens. */
const streamPath = /^\/v1\/(?:events|sessions\/[^/]+\/events)$/;

/** True when a request asks for an event stream with a `?ticket=` and no `Authorization` header. */
function isTicketRequest(c: Context<ServerEnv>): boolean {
  return (
    c.req.method === 'GET' &&
    streamPath.test(c.req.path) &&
    c.req.query('ticket') !== undefined &&
    c.req.header('authorization') === undefined
  );
}

/**
 * Hono's bearer-auth middleware over the configured tokens, compared in constant time (every token is compared,
 * so the time does not tell which matched). The matching token's grant (its scope and capabilities, never the
 * token) is kept as the request's `grant`. A missing, malformed or unknown token answers 401 with the error body.
 * A `GET` of an event stream with `?ticket=` and no header is let through holding no grant: the stream route
 * redeems the ticket (`redeemStreamTicket`); on every other route a ticket is no credential at all.
 */
export function requireToken(tokens: readonly ServerToken[]): MiddlewareHandler<ServerEnv> {
  const known = tokens.map((token) => ({ grant: grantOf(token), digest: digestOf(token.token) }));
  const bearer = bearerAuth<ServerEnv>({
    verifyToken: (token, c) => {
      const digest = digestOf(token);
      let grant: Grant | undefined;
      for (const entry of known) if (timingSafeEqual(entry.digest, digest)) grant ??= entry.grant;
      if (grant === undefined) return false;
      c.set('grant', grant);
      return true;
    },
    noAuthenticationHeader: { message: unauthorized },
    invalidAuthenticationHeader: { message: unauthorized },
    invalidToken: { message: unauthorized },
  });
  return async (c, next) => {
    if (!isTicketRequest(c)) return bearer(c, next);
    c.set('grant', emptyGrant);
    c.set('streamTicket', c.req.query('ticket'));
    await next();
    return undefined;
  };
}

/**
 * On an event-stream route: redeem the request's `?ticket=` (when it came with one instead of a token) against
 * this stream, taking the ticket's grant and lease; an unknown, expired, foreign or busy ticket answers 401, the
 * same answer for each.
 */
export function redeemStreamTicket(tickets: StreamTickets): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const ticket = c.get('streamTicket');
    if (ticket === undefined) {
      await next();
      return undefined;
    }
    const redeemed = tickets.redeem(ticket, { sessionKey: c.req.param('key') });
    if (redeemed === undefined) {
      return errorResponse(c, 401, 'unauthorized', 'the stream ticket is unknown, expired or in use');
    }
    c.set('grant', redeemed.grant);
    c.set('streamLease', redeemed.lease);
    try {
      await next();
    } finally {
      // A refusal before streaming (a bad cursor) ends the connection at once; a stream releases when it ends.
      if (c.res.headers.get('content-type')?.startsWith('text/event-stream') !== true)
        redeemed.lease.release();
    }
    return undefined;
  };
}

/** Refuse (403) a request on a session whose key the request's token does not cover. */
export const requireSessionScope: MiddlewareHandler<ServerEnv> = async (c, next) => {
  const key = c.req.param('key');
  if (key !== undefined && !grantCovers(c.get('grant'), key)) {
    return errorResponse(c, 403, 'forbidden', 'this token does not cover that session key');
  }
  await next();
  return undefined;
};

/** Refuse (403) a runtime-wide request made with a token scoped to some session keys. */
export const requireUnscoped: MiddlewareHandler<ServerEnv> = async (c, next) => {
  if (!grantIsUnscoped(c.get('grant'))) {
    return errorResponse(c, 403, 'forbidden', 'runtime-wide figures need a token not scoped to key prefixes');
  }
  await next();
  return undefined;
};
