import type { HttpBindings } from '@hono/node-server';
import type { ServerToken } from './server-options.js';

/**
 * The Hono environment of the server: the Node request and response (under `@hono/node-server`; absent when the
 * app is called with `app.request()`), and the token the request authenticated with.
 */
export interface ServerEnv {
  Bindings: Partial<HttpBindings>;
  Variables: { grant: ServerToken };
}
