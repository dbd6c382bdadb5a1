import { availableAt } from '../policies/index.js';
import { profileStateOf, type AuthProfileStore } from './auth-profile-store.js';

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
