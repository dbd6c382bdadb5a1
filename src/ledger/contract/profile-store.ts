/** Where auth profiles' usage state (cooldowns, counters) is kept, as opaque JSON the runtime validates. */
export interface ProfileStore {
  /** Every auth profile's state as the runtime last saved it (a corrupt one is skipped and reported). */
  loadProfileStates(): Promise<Map<string, unknown>>;
  /** Store a profile's state, replacing the one saved before; `at` is when (ms). */
  saveProfileState(profileId: string, state: unknown, at: number): Promise<void>;
}
