import type { Context, MiddlewareHandler } from 'hono';
import { errorResponse } from './http-errors.js';
import type { ServerEnv } from './server-env.js';

/**
 * What a token may do. `send`: post messages, chats and plans; `read`: status, queue, runs, transcript, events,
 * listings; `abort`: stop a run; `approve`: decide on calls (approve, reject, edit their args), supply deferred
 * results, pre-approve plan steps; `operate`: change a session's settings and queue, and the other operator
 * actions.
 */
export const capabilities = ['send', 'read', 'abort', 'approve', 'operate'] as const;
/** One capability of a token. */
export type Capability = (typeof capabilities)[number];

/** What a token scoped to key prefixes may do when it names no `can`: a chat client's share. */
export const scopedDefaultCapabilities: readonly Capability[] = ['send', 'read', 'abort'];

/**
 * What a request may do, resolved from its token (or stream ticket): the session keys it reaches and its
 * capabilities. It never holds the token itself.
 */
export interface Grant {
  /** The session keys reached, by prefix; undefined: every key. */
  readonly sessionKeyPrefixes?: readonly string[];
  /** The capabilities held. */
  readonly can: ReadonlySet<Capability>;
  /**
   * The sender role the token speaks with (docs/semantics.md, "Authority in group chats"): its messages carry it
   * (or a lower one), and its aborts and decisions are weighed as that role's. Undefined: the application's own
   * token, unbounded.
   */
  readonly role?: string;
}

/** What a configured token says about its reach (the token's own fields, as parsed). */
export interface TokenReach {
  readonly sessionKeyPrefixes?: readonly string[] | undefined;
  readonly can?: readonly Capability[] | undefined;
  readonly role?: string | undefined;
}

/**
 * The grant of a token: its prefixes, and its `can` when given; otherwise every capability for an unscoped
 * (admin) token and `send`, `read`, `abort` for a scoped one.
 */
export function grantOf(token: TokenReach): Grant {
  const scoped = token.sessionKeyPrefixes !== undefined;
  const can = new Set(token.can ?? (scoped ? scopedDefaultCapabilities : capabilities));
  const role = token.role === undefined ? {} : { role: token.role };
  return scoped
    ? { sessionKeyPrefixes: [...(token.sessionKeyPrefixes ?? [])], can, ...role }
    : { can, ...role };
}

/** A grant that reaches nothing and may do nothing (what a request holds before it is authenticated). */
export const emptyGrant: Grant = { sessionKeyPrefixes: [], can: new Set() };

/** True when the grant may touch session `key` (no prefixes: every key). */
export function grantCovers(grant: Grant, key: string): boolean {
  const prefixes = grant.sessionKeyPrefixes;
  return prefixes === undefined || prefixes.some((prefix) => key.startsWith(prefix));
}

/** True when the grant reaches every session (no prefixes): what runtime-wide figures need. */
export function grantIsUnscoped(grant: Grant): boolean {
  return grant.sessionKeyPrefixes === undefined;
}

/** The 403 answer naming the capability the request's token lacks. */
export function refuseCapability(c: Context, capability: Capability): Response {
  return errorResponse(c, 403, 'forbidden', `this token lacks the "${capability}" capability`, {
    capability,
  });
}

/** Refuse (403, naming the first one missing) a request whose token lacks any of `needed`. */
export function requireCapability(...needed: Capability[]): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const grant = c.get('grant');
    const missing = needed.find((capability) => !grant.can.has(capability));
    if (missing !== undefined) return refuseCapability(c, missing);
    await next();
    return undefined;
  };
}
