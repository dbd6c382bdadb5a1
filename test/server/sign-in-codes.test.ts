import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createSignInCodes, signInCodeTtlMs } from '../../src/server/sign-in-codes.js';

const tokens = [
  { token: 'web-token-0123456789', sessionKeyPrefixes: ['web:'] },
  { token: 'reader-token-0123456789', can: ['read' as const] },
  { token: 'operator-token-0123456789' },
];

describe('createSignInCodes', () => {
  it('trades a code for the first operator token once when it is redeemed in time', () => {
    const codes = createSignInCodes({ tokens, clock: fakeClock() });
    const code = codes.issue() as string;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(codes.redeem(code)).toBe('operator-token-0123456789');
    expect(codes.redeem(code)).toBeUndefined();
    expect(codes.redeem('not-a-code')).toBeUndefined();
  });

  it('refuses a code when it is redeemed after ten minutes', async () => {
    const clock = fakeClock();
    const codes = createSignInCodes({ tokens, clock });
    const code = codes.issue() as string;
    await clock.advance(signInCodeTtlMs + 1);
    expect(codes.redeem(code)).toBeUndefined();
  });

  it('issues no code when no token is an unscoped operator', () => {
    const codes = createSignInCodes({ tokens: tokens.slice(0, 2), clock: fakeClock() });
    expect(codes.issue()).toBeUndefined();
  });
});
