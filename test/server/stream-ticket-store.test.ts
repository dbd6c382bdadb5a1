import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { grantOf } from '../../src/server/capabilities.js';
import { createStreamTickets, maxHeldTickets } from '../../src/server/stream-tickets.js';

describe('createStreamTickets', () => {
  it('refuses to hold more than maxHeldTickets at once, and issues again once they expired', async () => {
    const clock = fakeClock({ now: 0 });
    const tickets = createStreamTickets({ clock, ttlMs: 1000, reconnectWindowMs: 1000 });
    const grant = grantOf({ sessionKeyPrefixes: ['web:'] });
    for (let index = 0; index < maxHeldTickets; index++) tickets.issue(grant, {});
    expect(() => tickets.issue(grant, {})).toThrow(expect.objectContaining({ code: 'rejected_busy' }));
    await clock.advance(1000);
    expect(tickets.issue(grant, {}).expiresAt).toBe(2000);
    expect(tickets.size).toBe(1);
  });

  it('grants a ticket only the reading part of its token, within the same scope', () => {
    const tickets = createStreamTickets({ clock: fakeClock({ now: 0 }), ttlMs: 1000, reconnectWindowMs: 0 });
    const { ticket } = tickets.issue(grantOf({}), { sessionKey: 'web:1' });
    const redeemed = tickets.redeem(ticket, { sessionKey: 'web:1' });
    expect(redeemed?.grant.sessionKeyPrefixes).toBeUndefined();
    expect([...(redeemed?.grant.can ?? [])]).toEqual(['read']);
    const scoped = tickets.issue(grantOf({ sessionKeyPrefixes: ['web:'], can: ['send', 'approve'] }), {});
    expect([...(tickets.redeem(scoped.ticket, {})?.grant.can ?? ['unexpected'])]).toEqual([]);
  });
});
