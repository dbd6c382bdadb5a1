import { describe, expect, it } from 'vitest';
import { createDeferredStarts, RestingSession } from '../../src/actors/session-door.js';
import { applyAdmission, type AdmitEvent } from '../../src/actors/session-admission.js';
import { initialSessionContext } from '../../src/actors/session-context.js';
import { defaultQueueSettings } from '../../src/policies/queue-settings.js';
import { bareSession } from '../support/session-actor.js';

/** The ADMIT of durable followup message `messageId`, admitted on the rows with the run id chosen ("run-cold"). */
const admitted: AdmitEvent = {
  type: 'ADMIT',
  item: { messageId: 'm1', text: 'hi', mode: 'followup', enqueuedAt: 1000, debounceMs: 0, maxWaitMs: 0 },
  settings: defaultQueueSettings,
  recorded: 'pending',
  at: 1000,
  remember: true,
  waitMs: 0,
  runId: 'run-cold',
};

/** A resting session "chat:1" over a bare machine; `scheduled` collects the starts it asks for. */
function restingSession() {
  const { actor, runs } = bareSession();
  let made = 0;
  const scheduled: RestingSession[] = [];
  const context = initialSessionContext('chat:1');
  const session = new RestingSession(
    'chat:1',
    2,
    7,
    context,
    () => {
      made += 1;
      return actor;
    },
    (started) => scheduled.push(started),
  );
  return { session, context, runs, scheduled, made: () => made };
}

describe('RestingSession', () => {
  it('makes no actor until one is read, and offers its context to admission until a message was admitted', () => {
    const { session, context, made } = restingSession();
    expect(made()).toBe(0);
    expect(session.restingContext()).toBe(context);
    expect(session.starting()).toBeUndefined();
    session.admitOnStart(admitted);
    expect(session.restingContext()).toBeUndefined();
    expect(session.starting()).toBeInstanceOf(Promise);
    expect(made()).toBe(0);
  });

  it('starts its actor once when read and has it learn the admitted message once, in the run chosen for it', async () => {
    const { session, runs, scheduled, made } = restingSession();
    session.admitOnStart(admitted);
    const starting = session.starting();
    expect(scheduled).toEqual([session]);
    const { context } = session.actor.getSnapshot();
    expect(session.actor).toBe(session.actor);
    expect(made()).toBe(1);
    expect(context.run?.runId).toBe('run-cold');
    expect(context.run?.messageIds).toEqual(['m1']);
    expect(context.seen.map(([id]) => id)).toEqual(['m1']);
    expect(runs).toHaveLength(1);
    session.start();
    expect(runs).toHaveLength(1);
    await expect(starting).resolves.toBeUndefined();
    expect(session.starting()).toBeUndefined();
    expect(session.restingContext()).toBeUndefined();
  });

  it('ends in the outcome applyAdmission gave on its context before the actor started', () => {
    const { session, context } = restingSession();
    const { outcome } = applyAdmission(context, admitted, 'idle', () => 'unused');
    expect(outcome).toMatchObject({ kind: 'start', disposition: 'started', runId: 'run-cold' });
    session.admitOnStart(admitted);
    const snapshot = session.actor.getSnapshot();
    expect(snapshot.value).toBe('running');
    expect(snapshot.context.run?.runId).toBe(outcome.runId);
  });
});

describe('createDeferredStarts', () => {
  it('starts the sessions admitted in one stretch after it, in admission order', async () => {
    const startLater = createDeferredStarts(() => 0);
    const first = restingSession();
    const second = restingSession();
    const order: string[] = [];
    const started = (name: string, session: RestingSession) => () => {
      order.push(name);
      return session.start();
    };
    startLater({ start: started('first', first.session) } as unknown as RestingSession);
    startLater({ start: started('second', second.session) } as unknown as RestingSession);
    expect(order).toEqual([]);
    await Promise.resolve();
    expect(order).toEqual(['first', 'second']);
  });

  it('waits while later hydration batches wait to be read, then starts', async () => {
    let waiting = 512;
    const startLater = createDeferredStarts(() => waiting);
    const { session, made } = restingSession();
    session.admitOnStart(admitted);
    startLater(session);
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(made()).toBe(0);
    waiting = 0;
    await session.starting();
    expect(made()).toBe(1);
  });
});
