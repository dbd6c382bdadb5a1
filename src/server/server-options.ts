import type { Hono } from 'hono';
import { z } from 'zod';
import { maxDurationMs, systemClock, type Clock } from '../core/index.js';
import { roleNamePattern } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { capabilities } from './capabilities.js';
import type { ServerEnv } from './server-env.js';

/** The environment variable `createServer` reads tokens from when `auth.tokens` is not given (comma-separated). */
export const tokensEnvironmentVariable = 'AGENTLANES_TOKENS';

const tokenSchema = z
  .object({
    /** The bearer token (at least 16 characters of the RFC 6750 token alphabet). */
    token: z
      .string()
      .min(16, 'a token has at least 16 characters')
      .regex(/^[A-Za-z0-9._~+/-]+=*$/, 'a token uses the RFC 6750 characters only'),
    /** The session keys this token may touch, by prefix (`web:`). @default every key */
    sessionKeyPrefixes: z.array(z.string().min(1)).min(1).optional(),
    /**
     * What this token may do. @default every capability without `sessionKeyPrefixes`; `send`, `read`, `abort`
     * with them
     */
    can: z.array(z.enum(capabilities)).min(1).optional(),
    /**
     * The sender role this token speaks with: a message it sends carries that role (a lower one if it names one; a
     * higher one is refused), and its aborts, approvals and supplied results are weighed as that role's.
     * @default none: the application's own token, whose messages carry the role they name
     */
    role: z.string().regex(roleNamePattern, 'a role is a letter, then letters, digits, _ or -').optional(),
  })
  .strict();

/** One bearer token and what it may reach. */
export type ServerToken = z.output<typeof tokenSchema>;

const corsSchema = z
  .object({
    /** Origins allowed to call the API from a browser. */
    origin: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
    /** @default 600 */
    maxAgeSeconds: z.int().min(0).max(86_400).default(600),
  })
  .strict();

const durationMs = (fallback: number) => z.int().min(0).max(maxDurationMs).default(fallback);

const serverOptionsSchema = z
  .object({
    /** Bearer tokens; when left out, read from `AGENTLANES_TOKENS` (comma-separated, unscoped). */
    auth: z
      .object({ tokens: z.array(tokenSchema).min(1) })
      .strict()
      .optional(),
    /** CORS for browser front ends. @default off (no CORS headers) */
    cors: corsSchema.optional(),
    /** The largest request body accepted. @default 1048576 (1 MB) */
    bodyLimitBytes: z
      .int()
      .min(1)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /** A comment line on every event stream this often, on the clock. @default 15000 */
    heartbeatMs: durationMs(15_000).refine((ms) => ms > 0, 'heartbeatMs is above 0'),
    /** The `retry:` advice sent at the start of every event stream. @default 2000 */
    retryMs: durationMs(2_000),
    /** Frames a client has not taken yet, at most (bytes); above it the stream waits for the client. @default 1048576 */
    clientBufferBytes: z
      .int()
      .min(1024)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024),
    /** How long a client may stay above `clientBufferBytes` before it is disconnected (0: at once). @default 10000 */
    slowClientMs: durationMs(10_000),
    /** The clock heartbeats and slow-client timers run on (pass the runtime's). @default systemClock */
    clock: z
      .custom<Clock>((value) => typeof (value as Clock | undefined)?.setTimeout === 'function')
      .optional(),
    /** Where tokens come from when `auth` is left out. @default process.env */
    env: z.record(z.string(), z.string().optional()).optional(),
    /** The dashboard page at `/` (static files, public; its data comes from `/v1`); `false` leaves it out. */
    dashboard: z
      .union([z.literal(false), z.object({ assetsDir: z.string().min(1).optional() }).strict()])
      .default({}),
    /** Stream tickets (`POST /v1/stream-tickets`): how a browser's `EventSource` authenticates. */
    streamTickets: z
      .object({
        /** How long a ticket may wait for its first connection, on the clock. @default 60000 */
        ttlMs: durationMs(60_000).refine((ms) => ms > 0, 'ttlMs is above 0'),
        /** How long after its connection ended a redeemed ticket still accepts a reconnect. @default 60000 */
        reconnectWindowMs: durationMs(60_000),
      })
      .strict()
      .prefault({}),
    /** How long `close()` lets open connections finish before cutting them, on the clock. @default 5000 */
    shutdownGraceMs: durationMs(5_000),
    /** Where failures no client is told about go (an unexpected error behind a 500). @default console.error */
    onError: z.custom<(error: unknown) => void>((value) => typeof value === 'function').optional(),
    /** More routes on the app (mounted after the API; they go through the same auth). */
    extraRoutes: z.custom<(app: Hono<ServerEnv>) => void>((value) => typeof value === 'function').optional(),
  })
  .strict();

/** What `createServer` takes. */
export type ServerOptions = z.input<typeof serverOptionsSchema>;

/** The options as checked, with the tokens resolved and the clock filled in. */
export type ServerConfig = Omit<
  z.output<typeof serverOptionsSchema>,
  'auth' | 'clock' | 'env' | 'onError'
> & {
  readonly tokens: readonly ServerToken[];
  readonly clock: Clock;
  readonly onError: (error: unknown) => void;
};

/** Report a failure when the options name no `onError`: its message only (never a request's headers). */
function reportToConsole(error: unknown): void {
  console.error('agentlanes server:', error instanceof Error ? error.message : String(error));
}

/** Tokens from the environment variable: comma-separated, each unscoped. */
function tokensFromEnvironment(env: Record<string, string | undefined>): ServerToken[] {
  const text = env[tokensEnvironmentVariable] ?? '';
  const tokens = text
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '');
  return z.array(tokenSchema).parse(tokens.map((token) => ({ token })));
}

/** Check the options once, at construction: `invalid_input` naming the field (never echoing a token). */
export function parseServerOptions(options: ServerOptions = {}): ServerConfig {
  const parsed = serverOptionsSchema.safeParse(options);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new RuntimeError('invalid_input', `createServer: ${fields.join('; ')}`);
  }
  const { auth, clock, env, onError, ...rest } = parsed.data;
  let tokens: readonly ServerToken[];
  try {
    tokens = auth?.tokens ?? tokensFromEnvironment(env ?? process.env);
  } catch {
    throw new RuntimeError(
      'invalid_input',
      `createServer: ${tokensEnvironmentVariable} holds a malformed token`,
    );
  }
  if (tokens.length === 0) {
    throw new RuntimeError(
      'invalid_input',
      `createServer: no bearer token: pass auth.tokens or set ${tokensEnvironmentVariable}`,
    );
  }
  return { ...rest, tokens, clock: clock ?? systemClock, onError: onError ?? reportToConsole };
}
