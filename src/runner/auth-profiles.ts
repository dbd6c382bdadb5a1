import { createStore, type Store } from '@xstate/store';
import { type Clock, scrubSecrets, storableText } from '../core/index.js';
import type { Ledger } from '../ledger/index.js';
import {
  type FailureReason,
  orderProfiles,
  type ProfileKind,
  isAvailable,
  availableAt,
  type ProfileState,
  freshProfileState,
  recordFailure,
  recordSuccess,
  type ProfileFailure,
} from '../policies/index.js';
import type { AuthProfilePool, PickedProfile, ProfileAvailability } from './model-call.js';

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
    scrub: (text) => storableText(scrubSecrets(text, pool.secrets)),
  };
}

/** What the profile store holds: the state of every profile that has one (the others count as fresh). */
export interface AuthProfileStoreContext {
  readonly states: ReadonlyMap<string, ProfileState>;
}

/** The events the store takes; each handler is one pure policy from `policies/profile-cooldown`. */
export type AuthProfileStoreEvent =
  | { readonly type: 'loaded'; readonly states: ReadonlyMap<string, ProfileState> }
  | { readonly type: 'failed'; readonly profileId: string; readonly failure: ProfileFailure }
  | { readonly type: 'succeeded'; readonly profileId: string; readonly now: number };

/** Emitted after every recorded attempt, with the profile's new state; persistence and stats listen to it. */
export interface ProfileRecorded {
  readonly type: 'recorded';
  readonly profileId: string;
  readonly outcome: 'failed' | 'succeeded';
  readonly state: ProfileState;
}

/** The auth-profile state as an @xstate/store store: transitions are the pure cooldown policies. */
export type AuthProfileStore = Store<
  AuthProfileStoreContext,
  { [Event in AuthProfileStoreEvent as Event['type']]: Omit<Event, 'type'> },
  ProfileRecorded
>;

/** The state of one profile in a context (fresh when it has none). */
export function profileStateOf(context: AuthProfileStoreContext, profileId: string): ProfileState {
  return context.states.get(profileId) ?? freshProfileState;
}

function withState(
  context: AuthProfileStoreContext,
  profileId: string,
  state: ProfileState,
): AuthProfileStoreContext {
  return { states: new Map(context.states).set(profileId, state) };
}

/**
 * Create the store. Loading replaces the states and emits nothing (they came from the ledger); a failed or
 * succeeded attempt moves one profile through the cooldown policies and emits `recorded`.
 */
export function createAuthProfileStore(options: { readonly perModelCooldown: boolean }): AuthProfileStore {
  return createStore<AuthProfileStoreContext, AuthProfileStoreEvent, ProfileRecorded>({
    context: { states: new Map() },
    on: {
      loaded: (_context, event) => ({ states: new Map(event.states) }),
      failed: (context, event, enqueue) => {
        const state = recordFailure(profileStateOf(context, event.profileId), {
          ...event.failure,
          perModel: options.perModelCooldown,
        });
        enqueue.emit.recorded({ profileId: event.profileId, outcome: 'failed', state });
        return withState(context, event.profileId, state);
      },
      succeeded: (context, event, enqueue) => {
        const state = recordSuccess(profileStateOf(context, event.profileId), event.now);
        enqueue.emit.recorded({ profileId: event.profileId, outcome: 'succeeded', state });
        return withState(context, event.profileId, state);
      },
    },
  });
}

/** One auth profile as a dashboard sees it: attempts recorded since the runtime started, and its cooldown. */
export interface ProfileStats {
  /** Attempts that succeeded with this profile since start. */
  readonly succeeded: number;
  /** Attempts that failed with this profile since start (every reason, cooling or not). */
  readonly failed: number;
  /** When the profile is usable again for any model (ms since the epoch; 0 when it never cooled). */
  readonly availableAt: number;
  /** When it last served a successful attempt, if it ever did (kept across restarts). */
  readonly lastUsedAt?: number;
}

/** The counting side of the profile store: a subscriber to its `recorded` events. */
export interface ProfileStatsView {
  /** Stats of every configured profile, by id. */
  read(): Record<string, ProfileStats>;
  /** Stop counting. */
  stop(): void;
}

/** Count the attempts the store records for the configured profiles; cooldowns are read from the store. */
export function createProfileStats(store: AuthProfileStore, profileIds: readonly string[]): ProfileStatsView {
  const counts = new Map(profileIds.map((id) => [id, { succeeded: 0, failed: 0 }]));
  const subscription = store.on('recorded', (event) => {
    const count = counts.get(event.profileId);
    if (count !== undefined) count[event.outcome] += 1;
  });
  return {
    read() {
      const context = store.getSnapshot().context;
      // fromEntries defines own properties, so an id like "__proto__" stays an entry.
      return Object.fromEntries(
        [...counts].map(([id, count]): [string, ProfileStats] => {
          const state = profileStateOf(context, id);
          const lastUsed = state.lastUsedAt === undefined ? {} : { lastUsedAt: state.lastUsedAt };
          return [id, { ...count, availableAt: availableAt(state), ...lastUsed }];
        }),
      );
    },
    stop: () => subscription.unsubscribe(),
  };
}

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
