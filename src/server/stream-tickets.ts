import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import type { Grant } from './capabilities.js';

/** Which event stream a ticket opens: one session's (`GET /v1/sessions/:key/events`), or `GET /v1/events`. */
export interface StreamBinding {
  /** The session whose stream it opens; undefined: the stream of every session the token covers. */
  readonly sessionKey?: string | undefined;
}

/** A redeemed ticket's hold on its stream: released when the connection ends, opening the reconnect window. */
export interface StreamLease {
  release(): void;
}

/** What a ticket is issued as. */
export interface IssuedTicket {
  /** The ticket: 32 random bytes, base64url (43 characters). */
  readonly ticket: string;
  /** Until when (ms since the epoch, on the server's clock) it may open its first connection. */
  readonly expiresAt: number;
}

/** Short-lived, in-memory tickets that let a browser's `EventSource` (which cannot send a header) authenticate. */
export interface StreamTickets {
  /**
   * Issue a ticket for `stream`, carrying `grant`'s scope and only its `read` capability; `rejected_busy` while
   * `maxHeldTickets` are held.
   */
  issue(grant: Grant, stream: StreamBinding): IssuedTicket;
  /**
   * Redeem a ticket presented on `stream`: its grant and the lease of the connection, or undefined when the
   * ticket is unknown, expired, bound to another stream, or held by a connection still open.
   */
  redeem(ticket: string, stream: StreamBinding): { grant: Grant; lease: StreamLease } | undefined;
  /** How many tickets are held (issued and not yet expired). */
  readonly size: number;
}

/** The most tickets held at once: past it, `issue` refuses (`rejected_busy`) rather than let memory grow. */
export const maxHeldTickets = 10_000;

/** One ticket as held: never the ticket itself, only its digest (the map's key). */
interface HeldTicket {
  readonly grant: Grant;
  readonly sessionKey: string | undefined;
  /** The deadline of the first connection. */
  readonly expiresAt: number;
  /** True while a connection holds the ticket. */
  connected: boolean;
  /** Once redeemed and released: the deadline of a reconnect. */
  reconnectUntil: number | undefined;
}

/** The timing of tickets, on the server's clock. */
export interface StreamTicketOptions {
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly reconnectWindowMs: number;
}

function digestOf(ticket: string): string {
  return createHash('sha256').update(ticket).digest('hex');
}

/** True when a ticket no longer opens anything at `now` (a connected one never expires). */
function isExpired(held: HeldTicket, now: number): boolean {
  if (held.connected) return false;
  if (held.reconnectUntil !== undefined) return now > held.reconnectUntil;
  return now >= held.expiresAt;
}

/**
 * Create the ticket store. A ticket opens its stream once within `ttlMs`; once redeemed it is the stream's: one
 * connection at a time, and a reconnect (the same URL, which a native `EventSource` re-uses with its
 * `Last-Event-ID`) accepted until `reconnectWindowMs` after the previous connection ended. The randomness is
 * the operating system's (`crypto.randomBytes`), never an injected source: a ticket must not be guessable.
 */
export function createStreamTickets(options: StreamTicketOptions): StreamTickets {
  const { clock } = options;
  const held = new Map<string, HeldTicket>();
  // Expired tickets are dropped at most once a second, or when the store is full: a sweep walks every ticket.
  let nextSweepAt = Number.NEGATIVE_INFINITY;
  const sweep = (now: number): void => {
    if (now < nextSweepAt && held.size < maxHeldTickets) return;
    nextSweepAt = now + 1000;
    for (const [digest, ticket] of held) if (isExpired(ticket, now)) held.delete(digest);
  };
  return {
    issue(grant, stream) {
      const now = clock.now();
      sweep(now);
      if (held.size >= maxHeldTickets) {
        throw new RuntimeError('rejected_busy', 'too many stream tickets are outstanding; try again shortly');
      }
      const ticket = randomBytes(32).toString('base64url');
      const expiresAt = now + options.ttlMs;
      const narrowed: Grant = {
        ...(grant.sessionKeyPrefixes === undefined ? {} : { sessionKeyPrefixes: grant.sessionKeyPrefixes }),
        can: new Set(grant.can.has('read') ? (['read'] as const) : []),
      };
      held.set(digestOf(ticket), {
        grant: narrowed,
        sessionKey: stream.sessionKey,
        expiresAt,
        connected: false,
        reconnectUntil: undefined,
      });
      return { ticket, expiresAt };
    },
    redeem(ticket, stream) {
      const digest = digestOf(ticket);
      const entry = held.get(digest);
      if (entry === undefined) return undefined;
      const now = clock.now();
      if (isExpired(entry, now)) {
        held.delete(digest);
        return undefined;
      }
      if (entry.connected || entry.sessionKey !== stream.sessionKey) return undefined;
      entry.connected = true;
      entry.reconnectUntil = undefined;
      let released = false;
      const lease: StreamLease = {
        release() {
          if (released) return;
          released = true;
          entry.connected = false;
          entry.reconnectUntil = clock.now() + options.reconnectWindowMs;
        },
      };
      return { grant: entry.grant, lease };
    },
    get size() {
      return held.size;
    },
  };
}
