import type { Clock } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import type { FailureReason } from '../policies/index.js';
import { scrubSecrets } from '../core/index.js';
import { orderProfiles, type ProfileKind } from '../policies/index.js';
import { isAvailable, availableAt, type ProfileState } from '../policies/index.js';
import type { AuthProfilePool, PickedProfile, ProfileAvailability } from './failover-context.js';
import { missingSecretMessage, resolveSecret } from './auth-profile-secrets.js';
import { createProfileStats, type ProfileStats } from './auth-profile-stats.js';
import { createAuthProfileStore, profileStateOf, type AuthProfileStore } from './auth-profile-store.js';

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
  /** Attempts and cooldown of every configured profile, for `runtime.stats()`. */
  stats(): Record<string, ProfileStats>;
}

function asState(saved: unknown): ProfileState | undefined {
  if (typeof saved !== 'object' || saved === null) return undefined;
  const state = saved as Partial<ProfileState>;
  if (typeof state.errorCount !== 'number' || typeof state.billingFailures !== 'number') return undefined;
  return state as ProfileState;
}

/** Save every recorded state to the ledger (a subscriber of the store), so cooldowns survive a restart. */
function persistRecordedStates(
  store: AuthProfileStore,
  ledger: Ledger,
  clock: Clock,
  onError: (error: unknown) => void,
) {
  return store.on('recorded', (event) => {
    ledger.saveProfileState(event.profileId, event.state, clock.now()).catch(onError);
  });
}

/** The profiles of one provider, the profile store, and the secrets seen so far (to scrub them). */
interface PoolState {
  readonly byProvider: ReadonlyMap<string, readonly AuthProfileConfig[]>;
  readonly order: Readonly<Record<string, readonly string[]>>;
  readonly store: AuthProfileStore;
  readonly secrets: Set<string>;
}

const stateIn = (pool: PoolState, id: string): ProfileState => profileStateOf(pool.store.get().context, id);

/** The first usable profile in order: available for `model` at `now`, not tried yet, its secret set. */
function pickProfile(
  pool: PoolState,
  request: {
    provider: string;
    model: string;
    tried: ReadonlySet<string>;
    now: number;
    preferred: string | undefined;
  },
): PickedProfile | undefined {
  const { provider, model, now } = request;
  const candidates = (pool.byProvider.get(provider) ?? []).filter(
    (profile) => !request.tried.has(profile.id),
  );
  const ordered = orderProfiles({
    profiles: candidates.map((profile) => ({ id: profile.id, kind: profile.type })),
    states: pool.store.get().context.states,
    now,
    model,
    preferred: request.preferred,
    explicitOrder: pool.order[provider],
  });
  for (const id of ordered) {
    const profile = candidates.find((candidate) => candidate.id === id);
    if (profile === undefined || !isAvailable(stateIn(pool, id), now, model)) continue;
    // A missing secret is a configuration error: the profile is skipped, never cooled, never called.
    const secret = resolveSecret(profile);
    if (secret === undefined) continue;
    pool.secrets.add(secret);
    return { id, credential: () => ({ profileId: id, secret }) };
  }
  return undefined;
}

/** The usable profile of `provider` that comes back soonest, and the profiles missing their secret. */
function availabilityOf(pool: PoolState, provider: string, model: string, now: number): ProfileAvailability {
  let soonest: { profileId: string; at: number } | undefined;
  const missing: string[] = [];
  for (const profile of pool.byProvider.get(provider) ?? []) {
    if (resolveSecret(profile) === undefined) {
      missing.push(missingSecretMessage(profile));
      continue;
    }
    const at = Math.max(now, availableAt(stateIn(pool, profile.id), model));
    if (soonest === undefined || at < soonest.at) soonest = { profileId: profile.id, at };
  }
  return { ...(soonest === undefined ? {} : { soonest }), missing };
}

function groupByProvider(profiles: readonly AuthProfileConfig[]): Map<string, AuthProfileConfig[]> {
  const byProvider = new Map<string, AuthProfileConfig[]>();
  for (const profile of profiles) {
    const list = byProvider.get(profile.provider) ?? [];
    list.push(profile);
    byProvider.set(profile.provider, list);
  }
  return byProvider;
}

/**
 * Create the pool. Secrets are resolved per call and remembered only to scrub them from error messages; profile
 * state (cooldowns, counters) lives in an @xstate/store store whose transitions are the cooldown policies, and
 * its subscribers write each change to the ledger and count attempts for the stats.
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
  const ids = new Set(profiles.map((profile) => profile.id));
  const store = createAuthProfileStore({ perModelCooldown: options.perModelCooldown });
  const pool: PoolState = {
    byProvider: groupByProvider(profiles),
    order: options.order,
    store,
    secrets: new Set(),
  };
  persistRecordedStates(store, ledger, clock, onError);
  const stats = createProfileStats(store, [...ids]);
  return {
    async load() {
      const states = new Map<string, ProfileState>();
      for (const [id, saved] of await ledger.loadProfileStates()) {
        const state = asState(saved);
        if (state !== undefined && ids.has(id)) states.set(id, state);
      }
      store.trigger.loaded({ states });
      for (const profile of profiles) {
        const secret = resolveSecret(profile);
        if (secret !== undefined) pool.secrets.add(secret);
      }
    },
    has: (provider) => (pool.byProvider.get(provider)?.length ?? 0) > 0,
    knows: (profileId) => ids.has(profileId),
    next: (provider, model, tried, now, preferred) =>
      pickProfile(pool, { provider, model, tried, now, preferred }),
    availability: (provider, model, now) => availabilityOf(pool, provider, model, now),
    failed(profileId, failure) {
      const { model, now, retryAfterMs } = failure;
      const reason = failure.reason as FailureReason;
      store.trigger.failed({ profileId, failure: { reason, now, model, retryAfterMs } });
      return availableAt(stateIn(pool, profileId), model);
    },
    succeeded: (profileId, now) => store.trigger.succeeded({ profileId, now }),
    stats: () => stats.read(),
    scrub: (text) => scrubSecrets(text, pool.secrets),
  };
}
