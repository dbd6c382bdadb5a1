import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { errorResponse } from './http-errors.js';
import type { ServerEnv } from './server-env.js';
import type { ServerToken } from './server-options.js';

/** A token's SHA-256 digest: equal lengths, so `timingSafeEqual` compares in time independent of the token. */
function digestOf(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** The 401 answer; it never says which token was tried. */
function unauthorized(c: Context): Response {
  return errorResponse(c, 401, 'unauthorized', 'a valid "Authorization: Bearer <token>" header is required');
}

/**
 * Hono's bearer-auth middleware over the configured tokens, compared in constant time (every token is compared,
 * so the time does not tell which matched). The matching token is kept as the request's `grant`. A missing,
 * malformed or unknown token answers 401 with the error body.
 */
export function requireToken(tokens: readonly ServerToken[]): MiddlewareHandler<ServerEnv> {
  const known = tokens.map((grant) => ({ grant, digest: digestOf(grant.token) }));
  return bearerAuth<ServerEnv>({
    verifyToken: (token, c) => {
      const digest = digestOf(token);
      let grant: ServerToken | undefined;
      for (const entry of known) if (timingSafeEqual(entry.digest, digest)) grant ??= entry.grant;
      if (grant === undefined) return false;
      c.set('grant', grant);
      return true;
    },
    noAuthenticationHeader: { message: unauthorized },
    invalidAuthenticationHeader: { message: unauthorized },
    invalidToken: { message: unauthorized },
  });
}

/** True when the grant may touch session `key` (no prefixes: every key). */
export function grantCovers(grant: ServerToken, key: string): boolean {
  const prefixes = grant.sessionKeyPrefixes;
  return prefixes === undefined || prefixes.some((prefix) => key.startsWith(prefix));
}

/** True when the grant reaches every session (no prefixes): what runtime-wide figures need. */
export function grantIsUnscoped(grant: ServerToken): boolean {
  return grant.sessionKeyPrefixes === undefined;
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
