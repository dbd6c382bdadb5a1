import type { PostgresAccess } from './access.js';
import type { ProfileStore } from '../contract/profile-store.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { corrupt } from '../sql/rows.js';

const saveSql = `INSERT INTO auth_profiles (profile_id, state, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (profile_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`;

/** Create the auth-profile store on the Postgres ledger; a corrupt state is skipped and reported. */
export function createPostgresProfiles(
  { write, read }: PostgresAccess,
  corruptRows: CorruptRowLog,
): ProfileStore {
  return {
    loadProfileStates: () =>
      read(async (query) => {
        const states = new Map<string, unknown>();
        const { rows } = await query<{ profile_id: string; state: string }>(
          'SELECT profile_id, state FROM auth_profiles ORDER BY profile_id',
        );
        for (const row of rows) {
          try {
            states.set(row.profile_id, JSON.parse(row.state) as unknown);
          } catch {
            // The profile starts afresh; the others keep their cooldowns.
            corruptRows.report(corrupt('auth_profiles', `"${row.profile_id}"`, 'state is not valid JSON'));
          }
        }
        return states;
      }),
    saveProfileState: (profileId, state, at) =>
      write(async (query) => {
        await query(saveSql, [profileId, JSON.stringify(state), at]);
      }),
  };
}
