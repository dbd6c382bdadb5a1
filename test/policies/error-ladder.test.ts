import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/core/errors.js';
import type { ErrorCode } from '../../src/core/errors.js';
import { failureClassOf, failurePrecedence, runFailureCode } from '../../src/policies/error-ladder.js';

describe('runFailureCode', () => {
  const table: ReadonlyArray<{ condition: string; codes: ErrorCode[]; expected: ErrorCode | undefined }> = [
    { condition: 'the run ran into nothing', codes: [], expected: undefined },
    { condition: 'there is one code', codes: ['tool_failed'], expected: 'tool_failed' },
    {
      condition: 'the run was cancelled after a provider outage',
      codes: ['provider_unavailable', 'cancelled'],
      expected: 'cancelled',
    },
    {
      condition: 'a denied tool comes after a failed tool',
      codes: ['tool_failed', 'tool_denied'],
      expected: 'tool_denied',
    },
    {
      condition: 'a tool failed and the provider rate-limited',
      codes: ['provider_rate_limit', 'tool_failed'],
      expected: 'tool_failed',
    },
    {
      condition: 'the context overflowed after invalid args',
      codes: ['args_invalid', 'context_overflow'],
      expected: 'context_overflow',
    },
    {
      condition: 'two provider codes tie',
      codes: ['provider_billing', 'provider_auth'],
      expected: 'provider_billing',
    },
    {
      condition: 'two validation codes tie',
      codes: ['args_unresolved', 'invalid_input'],
      expected: 'args_unresolved',
    },
    {
      condition: 'unresolved args meet the turn limit',
      codes: ['turn_limit', 'args_unresolved'],
      expected: 'args_unresolved',
    },
    {
      condition: 'the turn limit meets an internal error',
      codes: ['internal', 'turn_limit'],
      expected: 'turn_limit',
    },
    { condition: 'a timeout meets the turn limit', codes: ['timeout', 'turn_limit'], expected: 'turn_limit' },
    { condition: 'a timeout meets an internal error', codes: ['internal', 'timeout'], expected: 'timeout' },
    {
      condition: 'queue_full meets ledger_locked',
      codes: ['queue_full', 'ledger_locked'],
      expected: 'queue_full',
    },
    { condition: 'the same code repeats', codes: ['internal', 'internal'], expected: 'internal' },
    {
      condition: 'every rung is present',
      codes: [
        'internal',
        'timeout',
        'turn_limit',
        'invalid_input',
        'provider_auth',
        'tool_failed',
        'tool_denied',
        'cancelled',
      ],
      expected: 'cancelled',
    },
  ];

  it.each(table)('returns $expected when $condition', ({ codes, expected }) => {
    expect(runFailureCode(codes)).toBe(expected);
  });

  const rank = (code: ErrorCode): number => {
    const failureClass = failureClassOf(code);
    return failureClass === 'unclassified'
      ? failurePrecedence.length - 1.5
      : failurePrecedence.indexOf(failureClass);
  };

  it('returns one of the inputs that no other input outranks when codes are arbitrary', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...errorCodes), { minLength: 1, maxLength: 8 }), (codes) => {
        const result = runFailureCode(codes);
        expect(result).toBeDefined();
        expect(codes).toContain(result);
        for (const code of codes) expect(rank(code)).toBeGreaterThanOrEqual(rank(result as ErrorCode));
      }),
    );
  });
});

describe('failureClassOf', () => {
  it.each([
    { code: 'cancelled', expected: 'cancelled' },
    { code: 'provider_rate_limit', expected: 'provider' },
    { code: 'context_overflow', expected: 'provider' },
    { code: 'args_invalid', expected: 'validation' },
    { code: 'invalid_input', expected: 'validation' },
    { code: 'timeout', expected: 'unclassified' },
    { code: 'not_found', expected: 'unclassified' },
    { code: 'internal', expected: 'internal' },
  ] as const)('puts $code on the $expected rung when it is classified', ({ code, expected }) => {
    expect(failureClassOf(code)).toBe(expected);
  });
});
