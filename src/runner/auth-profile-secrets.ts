import type { AuthProfileConfig } from './auth-profiles.js';

/** The profile's secret, or undefined when its environment variable is not set (a configuration error). */
export function resolveSecret(profile: AuthProfileConfig): string | undefined {
  const source = profile.secret;
  if (typeof source === 'string') return source;
  if ('value' in source) return source.value;
  const value = process.env[source.env];
  return value === undefined || value === '' ? undefined : value;
}

/** Why a profile cannot be used at all: its environment variable is unset. */
export function missingSecretMessage(profile: AuthProfileConfig): string {
  const source = profile.secret;
  const variable = typeof source === 'object' && 'env' in source ? source.env : '(none)';
  return `auth profile "${profile.id}": environment variable ${variable} is not set`;
}
