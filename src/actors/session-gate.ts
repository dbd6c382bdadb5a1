import type { LiveSession, SessionRegistry } from './session-registry.js';

interface Waiting {
  run(session: LiveSession): void;
  fail(error: unknown): void;
}

/**
 * Run `work` against a session's live actor in call order. A live session runs it at once (synchronously);
 * otherwise calls queue behind startup recovery (`ready`) and the session's hydration and run in order when it completes, so a message can
 * never overtake one sent before it.
 */
export function createSessionGate(registry: SessionRegistry, ready: Promise<void>) {
  const gates = new Map<string, Waiting[]>();
  return function withSession<T>(key: string, work: (session: LiveSession) => Promise<T>): Promise<T> {
    const live = registry.live(key);
    if (live !== undefined && !gates.has(key)) return work(live);
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = {
        run: (session) => {
          try {
            work(session).then(resolve, reject);
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        },
        fail: (error) => reject(error instanceof Error ? error : new Error(String(error))),
      };
      const queue = gates.get(key);
      if (queue !== undefined) {
        queue.push(waiting);
        return;
      }
      const fresh: Waiting[] = [waiting];
      gates.set(key, fresh);
      ready
        .then(() => registry.acquire(key))
        .then(
          (session) => {
            for (let index = 0; index < fresh.length; index++) fresh[index]?.run(session);
            gates.delete(key);
          },
          (error: unknown) => {
            for (const entry of fresh) entry.fail(error);
            gates.delete(key);
          },
        );
    });
  };
}

/** Runs work against a session's live actor, in call order. */
export type SessionGate = ReturnType<typeof createSessionGate>;
