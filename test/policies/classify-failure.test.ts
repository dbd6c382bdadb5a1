import { describe, expect, it } from 'vitest';
import {
  classifyFailure,
  coolsProfile,
  disablesProfile,
  errorCodeFor,
  failureReasons,
  rotatesProfile,
} from '../../src/policies/classify-failure.js';
import type { FailureReason, ProviderFailure } from '../../src/policies/classify-failure.js';

describe('classifyFailure', () => {
  const rows: [string, ProviderFailure, FailureReason][] = [
    ['402', { status: 402, message: 'Payment Required' }, 'billing'],
    ['429', { status: 429, message: 'slow down' }, 'rate_limit'],
    ['429 with overloaded text', { status: 429, message: 'Overloaded' }, 'rate_limit'],
    ['408', { status: 408, message: 'Request Timeout' }, 'timeout'],
    ['400', { status: 400, message: 'messages.0.content: field required' }, 'format'],
    [
      '400 context length',
      { status: 400, message: "This model's maximum context length is 128000" },
      'context_overflow',
    ],
    [
      '400 prompt too long',
      { status: 400, message: 'prompt is too long: 210000 tokens > 200000' },
      'context_overflow',
    ],
    ['400 model not found', { status: 400, message: 'Model not found: claude-9' }, 'model_not_found'],
    [
      '400 thinking level',
      {
        status: 400,
        message: "Unsupported value 'xhigh'. Supported values are: 'low', 'high' for reasoning.effort",
      },
      'thinking_unsupported',
    ],
    [
      '400 credit balance',
      { status: 400, message: 'Your credit balance is too low to access the API' },
      'billing',
    ],
    [
      '400 invalid key',
      { status: 400, message: 'API key not valid. Please pass a valid API key.' },
      'auth_permanent',
    ],
    ['401', { status: 401, message: 'Unauthorized' }, 'auth'],
    ['403', { status: 403, message: 'Permission denied for this model' }, 'auth'],
    ['401 invalid api key', { status: 401, message: 'Invalid API Key' }, 'auth_permanent'],
    [
      '401 invalid x-api-key',
      { status: 401, message: 'authentication_error: invalid x-api-key' },
      'auth_permanent',
    ],
    ['401 invalid_api_key', { status: 401, message: '{"code":"invalid_api_key"}' }, 'auth_permanent'],
    ['403 revoked', { status: 403, message: 'This key has been REVOKED' }, 'auth_permanent'],
    ['401 incorrect key', { status: 401, message: 'Incorrect API key provided: sk-…' }, 'auth_permanent'],
    ['529', { status: 529, message: 'overloaded_error' }, 'overloaded'],
    ['500', { status: 500, message: 'Internal Server Error' }, 'timeout'],
    ['503 with overloaded text', { status: 503, message: 'The server is overloaded' }, 'timeout'],
    ['599', { status: 599, message: '' }, 'timeout'],
    ['404 falls to text', { status: 404, message: 'model not found' }, 'model_not_found'],
    ['404 unknown text', { status: 404, message: 'Not Found' }, 'unknown'],
    ['ETIMEDOUT', { code: 'ETIMEDOUT', message: 'connect ETIMEDOUT 10.0.0.1:443' }, 'timeout'],
    ['ECONNRESET', { code: 'ECONNRESET', message: 'socket hang up' }, 'timeout'],
    ['ECONNREFUSED', { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' }, 'timeout'],
    ['UND_ERR_SOCKET', { code: 'UND_ERR_SOCKET', message: 'other side closed' }, 'timeout'],
    ['lower-case code', { code: 'etimedout', message: 'x' }, 'timeout'],
    ['code beats text', { code: 'ECONNRESET', message: 'rate limit' }, 'timeout'],
    ['status beats code', { status: 402, code: 'ECONNRESET', message: '' }, 'billing'],
    ['unknown code falls to text', { code: 'EPROTO', message: 'Too Many Requests' }, 'rate_limit'],
    ['rate limit text', { message: 'Rate limit reached for requests' }, 'rate_limit'],
    ['too many requests text', { message: 'TOO MANY REQUESTS' }, 'rate_limit'],
    ['quota exceeded text', { message: 'Quota exceeded for metric' }, 'rate_limit'],
    ['resource_exhausted text', { message: 'RESOURCE_EXHAUSTED' }, 'rate_limit'],
    ['overloaded text', { message: 'Anthropic is Overloaded' }, 'overloaded'],
    ['insufficient credits text', { message: 'Insufficient credits on account' }, 'billing'],
    ['credit balance text', { message: 'credit balance too low' }, 'billing'],
    ['maximum context text', { message: 'exceeds the Maximum Context window' }, 'context_overflow'],
    ['model does not exist text', { message: 'The model `gpt-9` does not exist' }, 'model_not_found'],
    ['does not exist without model', { message: 'The file does not exist' }, 'unknown'],
    [
      'supported values for thinking',
      { message: 'thinking.budget: supported values are 1024+' },
      'thinking_unsupported',
    ],
    ['supported values without thinking', { message: 'temperature: supported values are 0..1' }, 'unknown'],
    ['aborted beats status', { status: 429, message: 'rate limit', aborted: true }, 'aborted'],
    ['aborted alone', { message: 'This operation was aborted', aborted: true }, 'aborted'],
    ['aborted false', { message: 'nothing', aborted: false }, 'unknown'],
    ['nothing known', { message: 'something odd happened' }, 'unknown'],
  ];

  it.each(rows)('returns the expected reason when the failure is %s', (_name, failure, expected) => {
    expect(classifyFailure(failure)).toBe(expected);
  });
});

describe('errorCodeFor', () => {
  it.each([
    ['billing', 'provider_billing'],
    ['rate_limit', 'provider_rate_limit'],
    ['overloaded', 'provider_rate_limit'],
    ['auth', 'provider_auth'],
    ['auth_permanent', 'provider_auth'],
    ['timeout', 'provider_unavailable'],
    ['unknown', 'provider_unavailable'],
    ['context_overflow', 'context_overflow'],
    ['model_not_found', 'invalid_input'],
    ['format', 'invalid_input'],
    ['thinking_unsupported', 'invalid_input'],
    ['aborted', 'cancelled'],
  ] as const)('maps to the runtime code when the reason is %s', (reason, code) => {
    expect(errorCodeFor(reason)).toBe(code);
  });
});

describe('rotatesProfile', () => {
  it('rotates exactly on auth, dead keys, rate limits, overload, billing and timeouts when asked per reason', () => {
    expect(failureReasons.filter(rotatesProfile)).toEqual([
      'billing',
      'rate_limit',
      'timeout',
      'auth',
      'auth_permanent',
      'overloaded',
    ]);
  });
});

describe('coolsProfile', () => {
  it('cools exactly on rate limits, timeouts, auth and overload when asked per reason', () => {
    expect(failureReasons.filter(coolsProfile)).toEqual(['rate_limit', 'timeout', 'auth', 'overloaded']);
  });
});

describe('disablesProfile', () => {
  it('disables exactly on billing and dead keys when asked per reason', () => {
    expect(failureReasons.filter(disablesProfile)).toEqual(['billing', 'auth_permanent']);
  });

  it('leaves no rotating reason without a cooldown or a disable when the two ladders are combined', () => {
    expect(
      failureReasons.filter(
        (reason) => rotatesProfile(reason) !== (coolsProfile(reason) || disablesProfile(reason)),
      ),
    ).toEqual([]);
  });
});
