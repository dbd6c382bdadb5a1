import type { ErrorCode } from '../core/errors.js';
import { ProviderError } from '../providers/model-provider.js';

/**
 * The error code a provider failure ends a run with. A first cut, by status then message text;
 * the full classification table of BEHAVIOUR.md (with failover) replaces it.
 */
export function providerFailureCode(error: unknown): ErrorCode {
  if (!(error instanceof ProviderError)) return 'internal';
  const text = error.message.toLowerCase();
  if (/context length|prompt is too long|maximum context/.test(text)) return 'context_overflow';
  if (error.status === 401 || error.status === 403) return 'provider_auth';
  if (error.status === 402) return 'provider_billing';
  if (error.status === 429) return 'provider_rate_limit';
  if (error.status !== undefined && (error.status >= 500 || error.status === 408))
    return 'provider_unavailable';
  if (/rate limit|too many requests|quota exceeded|resource_exhausted/.test(text))
    return 'provider_rate_limit';
  if (/insufficient credits|credit balance/.test(text)) return 'provider_billing';
  return 'provider_unavailable';
}
