import type { Clock } from '../core/clock.js';
import type { Ledger } from '../ledger/ledger.js';
import type { FailureReason } from '../policies/classify-failure.js';
import { scrubSecrets } from '../core/scrub-secrets.js';
import { orderProfiles, type ProfileKind } from '../policies/order-profiles.js';
import {
  freshProfileState,
  isAvailable,
  recordFailure,
  recordSuccess,
  availableAt,
  type ProfileState,
} from '../policies/profile-cooldown.js';
import type { AuthProfilePool } from '../runner/failover-context.js';

/** Where a profile's secret comes from: the value itself, or an environment variable read at call time. */
export type SecretSource = string | { readonly env: string } | { readonly value: string };

/** An auth profile as configured. */
export interface AuthProfileConfig {
  readonly id: string;
  readonly provider: string;
  readonly type: ProfileKind;
  readonly secret: SecretSource;
}

/** The auth-profile pool of a runtime, with its state loaded from and saved to the ledger. */
export interface AuthProfiles extends AuthProfilePool {
  /** Load the saved states (cooldowns survive a restart). */
  load(): Promise<void>;
  /** Whether a profile with this id is configured. */
  knows(profileId: string): boolean;
}

/** The profile's secret, or undefined when its environment variable is not set (a configuration error). */
function resolveSecret(profile: AuthProfileConfig): string | undefined {
  const source = profile.secret;
  if (typeof source === 'string') return source;
  if ('value' in source) return source.value;
  const value = process.env[source.env];
  return value === undefined || value === '' ? undefined : value;
}

/** Why a profile cannot be used at all: its environment variable is unset. */
function missingSecretMessage(profile: AuthProfileConfig): string {
  const source = profile.secret;
  const variable = typeof source === 'object' && 'env' in source ? source.env : '(none)';
  return `auth profile "${profile.id}": environment variable ${variable} is not set`;
}

function asState(saved: unknown): ProfileState | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined;
  const state = saved as Partial<ProfileState>;
  if (typeof state.errorCount !== 'number' || typeof state.billingFailures !== 'number') return undefined;
  return state as ProfileState;
}

/**
 * Create the pool. Secrets are resolved per call and remembered only to scrub them from error messages; profile
 * state (cooldowns, counters) is written to the ledger on every change, so it survives a restart.
 */
export function createAuthProfiles(options: {
  profiles: readonly AuthProfileConfig[];
  order: Readonly<Record<string, readonly string[]>>;
  perModelCooldown: boolean;
  ledger: Ledger;
  clock: Clock;
  onError: (error: unknown) => void;
}): AuthProfiles {
  const { profiles, ledger, clock, onError } = options;
  const byProvider = new Map<string, AuthProfileConfig[]>();
  for (const profile of profiles) {
    const list = byProvider.get(profile.provider) ?? [];
    list.push(profile);
    byProvider.set(profile.provider, list);
  }
  const byId = new Map(profiles.map((profile) => [profile.id, profile]));
  const states = new Map<string, ProfileState>();
  const secrets = new Set<string>();
  const stateOf = (id: string): ProfileState => states.get(id) ?? freshProfileState;
  const save = (id: string, state: ProfileState): void => {
    states.set(id, state);
    ledger.saveProfileState(id, state, clock.now()).catch(onError);
  };

  return {
    async load() {
      for (const [id, saved] of await ledger.loadProfileStates()) {
        const state = asState(saved);
        if (state !== undefined && byId.has(id)) states.set(id, state);
      }
      for (const profile of profiles) {
        const secret = resolveSecret(profile);
        if (secret !== undefined) secrets.add(secret);
      }
    },
    has: (provider) => (byProvider.get(provider)?.length ?? 0) > 0,
    knows: (profileId) => byId.has(profileId),
    next(provider, model, tried, now, preferred) {
      const candidates = (byProvider.get(provider) ?? []).filter((profile) => !tried.has(profile.id));
      const ordered = orderProfiles({
        profiles: candidates.map((profile) => ({ id: profile.id, kind: profile.type })),
        states,
        now,
        model,
        preferred,
        explicitOrder: options.order[provider],
      });
      for (const id of ordered) {
        const profile = byId.get(id);
        if (profile === undefined || !isAvailable(stateOf(id), now, model)) continue;
        // A missing secret is a configuration error: the profile is skipped, never cooled, never called.
        const secret = resolveSecret(profile);
        if (secret === undefined) continue;
        secrets.add(secret);
        return { id, credential: () => ({ profileId: id, secret }) };
      }
      return undefined;
    },
    availability(provider, model, now) {
      let soonest: { profileId: string; at: number } | undefined;
      const missing: string[] = [];
      for (const profile of byProvider.get(provider) ?? []) {
        if (resolveSecret(profile) === undefined) {
          missing.push(missingSecretMessage(profile));
          continue;
        }
        const at = Math.max(now, availableAt(stateOf(profile.id), model));
        if (soonest === undefined || at < soonest.at) soonest = { profileId: profile.id, at };
      }
      return { ...(soonest === undefined ? {} : { soonest }), missing };
    },
    failed(profileId, failure) {
      const next = recordFailure(stateOf(profileId), {
        reason: failure.reason as FailureReason,
        now: failure.now,
        model: failure.model,
        retryAfterMs: failure.retryAfterMs,
        perModel: options.perModelCooldown,
      });
      save(profileId, next);
      return availableAt(next, failure.model);
    },
    succeeded(profileId, now) {
      save(profileId, recordSuccess(stateOf(profileId), now));
    },
    scrub: (text) => scrubSecrets(text, secrets),
  };
}
