import { describe, expect, it } from 'vitest';
import { createDeferred, type Deferred } from '../../src/core/deferred.js';
import { createSessionDoors } from '../../src/actors/session-door.js';
import type { LiveSession } from '../../src/actors/session-registry.js';

/** A stand-in live session: the door only hands it to the calls. */
function liveSession(key: string): LiveSession {
  return { key, epoch: 1, lastSeq: 0 } as unknown as LiveSession;
}

/** Doors over a map of live sessions whose hydrations the test settles by hand. */
function doorsWithLoads() {
  const sessions = new Map<string, LiveSession>();
  const loads: { key: string; done: Deferred<void> }[] = [];
  const doors = createSessionDoors(
    (key) => sessions.get(key),
    async (key) => {
      const done = createDeferred<void>();
      loads.push({ key, done });
      await done.promise;
      const session = liveSession(key);
      sessions.set(key, session);
      return session;
    },
  );
  return { doors, sessions, loads };
}

/** Let every pending promise reaction run. */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('session doors', () => {
  it('runs a call on a live session with nothing in progress at once, in the caller stretch', () => {
    const { doors, sessions } = doorsWithLoads();
    sessions.set('s', liveSession('s'));
    const ran: string[] = [];
    void doors.enter('s', () => Promise.resolve(ran.push('now')));
    expect(ran).toEqual(['now']);
    expect(doors.busy('s')).toBe(false);
  });

  it('hydrates once for every call and acquire waiting, then runs the calls in call order', async () => {
    const { doors, loads } = doorsWithLoads();
    const ran: string[] = [];
    const first = doors.enter('s', () => Promise.resolve(ran.push('first')));
    const acquired = doors.acquire('s');
    const second = doors.enter('s', () => Promise.resolve(ran.push('second')));
    await flush();
    expect(loads).toHaveLength(1);
    expect(doors.loadingKeys()).toEqual(['s']);
    expect(doors.busy('s')).toBe(true);
    loads[0]?.done.resolve();
    await Promise.all([first, second, acquired]);
    expect(ran).toEqual(['first', 'second']);
    expect(doors.busy('s')).toBe(false);
  });

  it('holds later calls, admissions and others, until an admission applied, in call order', async () => {
    const { doors, sessions } = doorsWithLoads();
    sessions.set('s', liveSession('s'));
    const written = createDeferred<void>();
    const ran: string[] = [];
    const admission = doors.enter(
      's',
      async () => {
        ran.push('admit 1: writing');
        await written.promise;
        ran.push('admit 1: applied');
      },
      { holds: true },
    );
    const approve = doors.enter('s', () => Promise.resolve(ran.push('approve')));
    const second = doors.enter('s', () => Promise.resolve(ran.push('admit 2')), { holds: true });
    await flush();
    expect(ran).toEqual(['admit 1: writing']);
    expect(doors.busy('s')).toBe(true);
    written.resolve();
    await Promise.all([admission, approve, second]);
    expect(ran).toEqual(['admit 1: writing', 'admit 1: applied', 'approve', 'admit 2']);
    await flush();
    expect(doors.busy('s')).toBe(false);
  });

  it('lets the next call in after an admission that failed, and the failure reaches only its caller', async () => {
    const { doors, sessions } = doorsWithLoads();
    sessions.set('s', liveSession('s'));
    const failing = doors.enter('s', () => Promise.reject(new Error('ledger_unavailable')), { holds: true });
    const next = doors.enter('s', () => Promise.resolve('next ran'));
    await expect(failing).rejects.toThrow('ledger_unavailable');
    await expect(next).resolves.toBe('next ran');
  });

  it('fails every call waiting for a hydration that failed, and the next call hydrates again', async () => {
    const sessions = new Map<string, LiveSession>();
    let attempts = 0;
    const doors = createSessionDoors(
      (key) => sessions.get(key),
      (key) => {
        attempts++;
        if (attempts === 1) return Promise.reject(new Error('corrupt row'));
        const session = liveSession(key);
        sessions.set(key, session);
        return Promise.resolve(session);
      },
    );
    const first = doors.enter('s', () => Promise.resolve('first'));
    const second = doors.enter('s', () => Promise.resolve('second'));
    await expect(first).rejects.toThrow('corrupt row');
    await expect(second).rejects.toThrow('corrupt row');
    expect(doors.busy('s')).toBe(false);
    await expect(doors.enter('s', () => Promise.resolve('third'))).resolves.toBe('third');
    expect(attempts).toBe(2);
  });

  it('waits for startup recovery before hydrating, while an acquire hydrates at once and is shared', async () => {
    const { doors, loads } = doorsWithLoads();
    const ready = createDeferred<void>();
    doors.openAfter(ready.promise);
    const ran: string[] = [];
    const call = doors.enter('s', () => Promise.resolve(ran.push('call')));
    await flush();
    expect(loads).toHaveLength(0);
    const acquired = doors.acquire('s');
    await flush();
    expect(loads).toHaveLength(1);
    loads[0]?.done.resolve();
    await acquired;
    expect(ran).toEqual([]);
    ready.resolve();
    await call;
    expect(ran).toEqual(['call']);
    expect(loads).toHaveLength(1);
  });

  it('settles `admitted()` once every admission in progress applied', async () => {
    const { doors, sessions } = doorsWithLoads();
    sessions.set('a', liveSession('a'));
    sessions.set('b', liveSession('b'));
    const writes = [createDeferred<void>(), createDeferred<void>()];
    void doors.enter('a', () => writes[0]?.promise ?? Promise.resolve(), { holds: true });
    void doors.enter('b', () => writes[1]?.promise ?? Promise.resolve(), { holds: true });
    let done = false;
    void doors.admitted().then(() => (done = true));
    writes[0]?.resolve();
    await flush();
    expect(done).toBe(false);
    writes[1]?.resolve();
    await flush();
    expect(done).toBe(true);
  });
});
