import { describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/core/errors.js';
import {
  isTransientToolFailure,
  nextToolRetryDelay,
  noToolRetry,
  toolFailureKinds,
  toolRetryFor,
} from '../../src/policies/tool-retry.js';

const half = () => 0.5;

describe('toolFailureKinds', () => {
  it('classifies every error code when the union grows', () => {
    expect(Object.keys(toolFailureKinds).sort()).toEqual([...errorCodes].sort());
  });

  it('retries what may clear on its own and never what the caller or the call got wrong', () => {
    const transient = errorCodes.filter(isTransientToolFailure);
    expect(transient).toEqual(
      expect.arrayContaining(['timeout', 'tool_failed', 'provider_unavailable', 'provider_rate_limit']),
    );
    for (const code of [
      'cancelled',
      'tool_denied',
      'args_invalid',
      'args_unresolved',
      'invalid_input',
    ] as const) {
      expect(isTransientToolFailure(code)).toBe(false);
    }
  });
});

describe('toolRetryFor', () => {
  it('takes the tool’s own retry when it defines one, else the caller’s, else none', () => {
    const own = { attempts: 1, baseMs: 50 };
    const caller = { attempts: 3, baseMs: 500 };
    expect(toolRetryFor(own, caller)).toBe(own);
    expect(toolRetryFor(undefined, caller)).toBe(caller);
    expect(toolRetryFor(undefined, undefined)).toBe(noToolRetry);
  });
});

describe('nextToolRetryDelay', () => {
  const retry = { attempts: 2, baseMs: 200 };

  it('backs off with full jitter, doubling per attempt, when the failure is transient', () => {
    expect(nextToolRetryDelay(0, 'tool_failed', retry, half)).toBe(100);
    expect(nextToolRetryDelay(1, 'timeout', retry, half)).toBe(200);
  });

  it('gives up when the retries are spent or the failure is permanent', () => {
    expect(nextToolRetryDelay(2, 'tool_failed', retry, half)).toBeUndefined();
    expect(nextToolRetryDelay(0, 'args_invalid', retry, half)).toBeUndefined();
    expect(nextToolRetryDelay(0, 'tool_failed', noToolRetry, half)).toBeUndefined();
  });

  it('caps the delay at 30 s when attempts are many', () => {
    expect(nextToolRetryDelay(9, 'timeout', { attempts: 10, baseMs: 60_000 }, () => 0.999_999)).toBe(29_999);
  });
});
