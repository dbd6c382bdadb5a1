import { describe, expect, it } from 'vitest';
import type { ProfileStore } from '../../src/ledger/index.js';
import type { Current } from './ledger-fixtures.contract.js';

/** Auth profiles' usage states: saved per profile, loaded all at once, opaque JSON to the ledger. */
export function describeProfilesContract(current: Current<ProfileStore>): void {
  describe('auth profile states', () => {
    it('returns an empty map when no state was saved', async () => {
      expect(await current().loadProfileStates()).toEqual(new Map());
    });

    it('returns the last state saved for each profile when several were saved', async () => {
      const ledger = current();
      await ledger.saveProfileState('oa-1', { errorCount: 1, cooldownUntil: 30_000 }, 1);
      await ledger.saveProfileState('oa-2', { errorCount: 0 }, 2);
      await ledger.saveProfileState('oa-1', { errorCount: 2, cooldownUntil: 90_000 }, 3);
      expect(await ledger.loadProfileStates()).toEqual(
        new Map<string, unknown>([
          ['oa-1', { errorCount: 2, cooldownUntil: 90_000 }],
          ['oa-2', { errorCount: 0 }],
        ]),
      );
    });

    it('round-trips nested states deep-equal when they hold lists, nulls and nested objects', async () => {
      const state = {
        errorCount: 3,
        failures: { rate_limit: 2, auth: 1 },
        lastUsed: null,
        history: [1, 2, 3],
      };
      await current().saveProfileState('oa-1', state, 5);
      expect((await current().loadProfileStates()).get('oa-1')).toEqual(state);
    });

    it('keeps its own copy when the caller mutates a state after saving it or after loading it', async () => {
      const ledger = current();
      const state = { errorCount: 1, failures: { auth: 1 } };
      await ledger.saveProfileState('oa-1', state, 1);
      state.failures.auth = 99;
      const loaded = (await ledger.loadProfileStates()).get('oa-1') as { failures: { auth: number } };
      expect(loaded.failures.auth).toBe(1);
      loaded.failures.auth = 42;
      expect((await ledger.loadProfileStates()).get('oa-1')).toEqual({
        errorCount: 1,
        failures: { auth: 1 },
      });
    });
  });
}
