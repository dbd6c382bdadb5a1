import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import type { Runtime } from '../runtime/index.js';
import { mountActivityRoutes } from './activity-routes.js';
import { requireToken } from './auth.js';
import { mountChatRoute } from './chat-route.js';
import { mountDashboard } from './dashboard/index.js';
import { mountEventRoutes } from './event-routes.js';
import { createErrorHandler, errorResponse } from './http-errors.js';
import { listenOn, type ListenOptions, type ListeningServer } from './listen.js';
import { countRuntimeEvents } from './metrics.js';
import { createOpenStreams } from './open-streams.js';
import { mountRuntimeRoutes } from './runtime-routes.js';
import type { ServerEnv } from './server-env.js';
import { parseServerOptions, type ServerConfig, type ServerOptions } from './server-options.js';
import { mountSessionRoutes } from './session-routes.js';
import { createSignInCodes, mountSignIn } from './sign-in-codes.js';
import { createStreamTickets } from './stream-tickets.js';

/** The HTTP server of a runtime: the Hono app, and `listen` to serve it. */
export interface AgentlanesServer {
  /** The Hono app (mount it in another app, or call `app.request()`). */
  readonly app: Hono<ServerEnv>;
  /** Serve the app on a port; resolves once it listens. */
  readonly listen: (options?: ListenOptions) => Promise<ListeningServer>;
  /**
   * A one-time link that signs the dashboard at `baseUrl` in as the first operator token (see sign-in-codes.ts: the
   * token never rides in the URL), or undefined without a dashboard or an operator token.
   */
  readonly signInLink: (baseUrl: string) => string | undefined;
}

/** Paths anyone may read: the health check and the dashboard's static page (its data needs a token). */
function isPublic(path: string, config: ServerConfig): boolean {
  if (path === '/healthz') return true;
  return config.dashboard !== false && (path === '/' || path.startsWith('/dashboard/'));
}

/** CORS (when configured), the bearer token on every non-public path, and the body cap. */
function mountGuards(app: Hono<ServerEnv>, config: ServerConfig): void {
  if (config.cors !== undefined) {
    app.use(
      '*',
      cors({
        origin: config.cors.origin,
        allowMethods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
        allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
        exposeHeaders: ['x-vercel-ai-ui-message-stream'],
        maxAge: config.cors.maxAgeSeconds,
      }),
    );
  }
  const auth = requireToken(config.tokens);
  const guard: MiddlewareHandler<ServerEnv> = (c, next) =>
    isPublic(c.req.path, config) ? next() : auth(c, next);
  app.use('*', guard);
  app.use(
    '*',
    bodyLimit({
      maxSize: config.bodyLimitBytes,
      onError: (c) =>
        errorResponse(c, 413, 'payload_too_large', `the request body is over ${config.bodyLimitBytes} bytes`),
    }),
  );
}

/**
 * Create the HTTP API of a runtime (Hono): sessions over JSON under `/v1`, Server-Sent Events of the runtime's
 * events (resumable by cursor), the AI SDK UI message stream for `useChat`, `/metrics`, `/healthz`, and the
 * dashboard page. Every route but `/healthz` and the page needs `Authorization: Bearer <token>` (the event
 * streams also take a short-lived `?ticket=`), and each the capability its token must hold. Bad options throw
 * `invalid_input` here.
 */
export function createServer(runtime: Runtime, options: ServerOptions = {}): AgentlanesServer {
  const config = parseServerOptions(options);
  const streams = createOpenStreams();
  const counters = countRuntimeEvents(runtime, config.onError);
  const app = new Hono<ServerEnv>();
  app.onError(createErrorHandler(config.onError));
  app.notFound((c) => errorResponse(c, 404, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  mountGuards(app, config);
  app.get('/healthz', (c) => c.json({ ok: true }));
  const deps = { runtime, config, streams, counters };
  const tickets = createStreamTickets({ clock: config.clock, ...config.streamTickets });
  mountSessionRoutes(app, runtime);
  mountChatRoute(app, deps);
  mountEventRoutes(app, { ...deps, tickets });
  mountRuntimeRoutes(app, deps);
  mountActivityRoutes(app, deps);
  const signIn = createSignInCodes({ tokens: config.tokens, clock: config.clock });
  if (config.dashboard !== false) {
    mountSignIn(app, signIn);
    const { assetsDir } = config.dashboard;
    mountDashboard(app, assetsDir === undefined ? {} : { assetsDir });
  }
  config.extraRoutes?.(app);
  return {
    app,
    signInLink: (baseUrl) => {
      const code = config.dashboard === false ? undefined : signIn.issue();
      return code === undefined ? undefined : `${baseUrl.replace(/\/+$/, '')}/#sign-in=${code}`;
    },
    listen: (listenOptions) =>
      listenOn(app, { streams, clock: config.clock, shutdownGraceMs: config.shutdownGraceMs }, listenOptions),
  };
}
