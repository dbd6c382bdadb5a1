import type { ProfileStore } from '../contract/profile-store.js';
import type { SqliteAccess } from './access.js';
import type { CorruptRowLog } from '../sql/corrupt-rows.js';
import { corrupt } from '../sql/rows.js';

/** Create the auth-profile store on the SQLite ledger's connection; a corrupt state is skipped and reported. */
export function createSqliteProfiles(
  { db, write, read }: SqliteAccess,
  corruptRows: CorruptRowLog,
): ProfileStore {
  const loadProfiles = db.prepare('SELECT profile_id, state FROM auth_profiles');
  const saveProfile = db.prepare(
    `INSERT INTO auth_profiles (profile_id, state, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (profile_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
  );
  return {
    loadProfileStates: () =>
      read(() => {
        const states = new Map<string, unknown>();
        for (const row of loadProfiles.all() as { profile_id: string; state: string }[]) {
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
      write(() => saveProfile.run(profileId, JSON.stringify(state), at), 'one'),
  };
}
