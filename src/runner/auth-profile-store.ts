import { createStore, type Store } from '@xstate/store';
import {
  freshProfileState,
  recordFailure,
  recordSuccess,
  type ProfileFailure,
  type ProfileState,
} from '../policies/index.js';

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
