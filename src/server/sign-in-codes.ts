import { createHash, randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Clock } from '../core/index.js';
import { grantOf } from './capabilities.js';
import { errorResponse, readBody } from './http-errors.js';
import type { ServerEnv } from './server-env.js';
import type { ServerToken } from './server-options.js';

/**
 * One-time codes that sign the dashboard in without pasting a token: `agentlanes serve` prints a link whose
 * fragment (`#sign-in=<code>`, never sent to a server, so never in an access log or a Referer) carries a code; the
 * page trades it once, by POST, for the operator token, which it keeps in sessionStorage as if it had been pasted.
 * The long-lived token itself is never in a URL. A code is 32 random bytes, held only as its digest, expires after
 * ten minutes, and works once.
 */
export interface SignInCodes {
  /** A new code for the first operator token (unscoped, with `operate`), or undefined when there is none. */
  issue(): string | undefined;
  /** The token a code stands for, once: undefined when the code is unknown, used or expired. */
  redeem(code: string): string | undefined;
}

/** How long a printed sign-in link works. */
export const signInCodeTtlMs = 10 * 60_000;
/** The most codes held at once (each `issue` beyond it drops the oldest). */
const maxHeldCodes = 100;

function digest(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

/** Codes for the first operator token among `tokens`, timed on `clock`. */
export function createSignInCodes(options: {
  readonly tokens: readonly ServerToken[];
  readonly clock: Clock;
}): SignInCodes {
  const operator = options.tokens.find((token) => {
    const grant = grantOf(token);
    return grant.sessionKeyPrefixes === undefined && grant.can.has('operate');
  });
  const held = new Map<string, number>();
  return {
    issue() {
      if (operator === undefined) return undefined;
      const code = randomBytes(32).toString('base64url');
      held.set(digest(code), options.clock.now() + signInCodeTtlMs);
      for (const oldest of held.keys()) {
        if (held.size <= maxHeldCodes) break;
        held.delete(oldest);
      }
      return code;
    },
    redeem(code) {
      const key = digest(code);
      const expiresAt = held.get(key);
      held.delete(key);
      if (operator === undefined || expiresAt === undefined || options.clock.now() > expiresAt)
        return undefined;
      return operator.token;
    },
  };
}

const bodySchema = z.object({ code: z.string().min(1).max(100) }).strict();

/** The URL path the page posts a code to: under the dashboard's public prefix, since the page holds no token yet. */
export const signInPath = '/dashboard/sign-in';

/** `POST /dashboard/sign-in` `{ code }`: 200 `{ token }` the first time, 401 `unauthorized` after or when unknown. */
export function mountSignIn(app: Hono<ServerEnv>, codes: SignInCodes): void {
  app.post(signInPath, async (c) => {
    const { code } = await readBody(c, bodySchema);
    const token = codes.redeem(code);
    c.header('cache-control', 'no-store');
    if (token === undefined) {
      return errorResponse(c, 401, 'unauthorized', 'this sign-in link was used, has expired or is unknown');
    }
    return c.json({ token });
  });
}
