import { RuntimeError } from '../core/index.js';
import { assertOpen, type RuntimeInternals } from '../actors/index.js';
import { parseQueueSettings } from '../actors/index.js';
import type { Session } from './session-handle.js';

/** The settings a session handle changes: queue settings, preferred auth profile, tool-policy layer (persisted). */
export function sessionSettings(
  internals: RuntimeInternals,
  key: string,
): Pick<Session, 'configure' | 'preferProfile' | 'configureTools'> {
  const { registry, withSession } = internals;
  return {
    async configure(settings) {
      assertOpen(internals);
      const override = parseQueueSettings('configure', settings);
      await withSession(key, (live) => {
        live.actor.send({ type: 'CONFIGURE', override });
        return registry.persist(live);
      });
    },
    async preferProfile(profileId) {
      assertOpen(internals);
      if (profileId !== null && (typeof profileId !== 'string' || !internals.knowsProfile(profileId))) {
        throw new RuntimeError(
          'invalid_input',
          `preferProfile: no auth profile "${String(profileId)}" is configured`,
        );
      }
      await withSession(key, (live) => {
        live.actor.send({ type: 'PREFER_PROFILE', profileId });
        return registry.persist(live);
      });
    },
    async configureTools(layer) {
      assertOpen(internals);
      const parsed = layer === null ? undefined : internals.sessionTools.parseLayer('configureTools', layer);
      await withSession(key, (live) => {
        live.actor.send({ type: 'CONFIGURE_TOOLS', layer: parsed });
        return registry.persist(live);
      });
    },
  };
}
