import type { Perform } from './perform.js';
import type { ProfileStore } from '../contract/profile-store.js';

/** Keep auth profiles' states in memory, as JSON text (a saved state cannot change under the ledger). */
export function createMemoryProfiles(perform: Perform): ProfileStore {
  const states = new Map<string, string>();
  return {
    loadProfileStates: () =>
      perform(() => new Map([...states].map(([id, json]) => [id, JSON.parse(json) as unknown]))),
    saveProfileState: (profileId, state) =>
      perform(() => {
        states.set(profileId, JSON.stringify(state));
      }),
  };
}
