import type { HttpBindings } from '@hono/node-server';
import type { Grant } from './capabilities.js';
import type { StreamLease } from './stream-tickets.js';

/**
 * The Hono environment of the server: the Node request and response (under `@hono/node-server`; absent when the
 * app is called with `app.request()`), what the request's token (or stream ticket) grants, and on an event
 * stream opened with a ticket, the ticket and its lease.
 */
export interface ServerEnv {
  Bindings: Partial<HttpBindings>;
  Variables: { grant: Grant; streamTicket?: string; streamLease?: StreamLease };
}
