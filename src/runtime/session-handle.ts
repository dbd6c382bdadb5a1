import type { RuntimeEvent } from '../core/index.js';
import { sendMessage } from '../actors/index.js';
import { streamEvents, type EventStreamOptions } from '../events/index.js';
import { parseTimeout, waitForRun } from '../actors/index.js';
import { createSessionQueue } from '../actors/index.js';
import { sessionSettings } from './session-settings.js';
import { abortSession, sessionStatus } from '../actors/index.js';
import { assertOpen, type RuntimeInternals } from '../actors/index.js';
import { assertMayControl, type Controller } from '../actors/index.js';
import { approveCall, supplyResult } from '../actors/index.js';
import { approvePlan, executePlan } from '../actors/index.js';
import { startUndo } from '../runner/index.js';
import { sessionScopeOf } from '../actors/index.js';
import { assertUndoable, parseUndoOptions } from '../actors/index.js';
import { parseDeliveryInDoubt } from './delivery-report.js';
import type { Session } from '../actors/index.js';

export type { SessionStatus } from '../actors/index.js';
export type { Session, DeliveryInDoubt, PlanInput } from '../actors/index.js';

/** Replay session `key`'s recorded events after `after`, then follow its live ones. */
function sessionEvents(
  internals: RuntimeInternals,
  key: string,
  options: EventStreamOptions,
): AsyncIterable<RuntimeEvent> {
  const { ledger, clock, onError } = internals.services;
  const { bus, closed } = internals;
  return streamEvents({ ledger, bus, clock, closed, onError }, { ...options, sessionKey: key });
}

/** `readStatus()` and `readQueue()` of one process: what `status()` and `queue.list()` answer. */
function sessionReads(internals: RuntimeInternals, key: string): Pick<Session, 'readStatus' | 'readQueue'> {
  return {
    readStatus: () => Promise.resolve(sessionStatus(internals, key)),
    readQueue: () => Promise.resolve(createSessionQueue(internals, key).list()),
  };
}

/** Abort session `key`'s run; with `by`, only when its role may stop that run (`forbidden` otherwise). */
async function abortAs(
  internals: RuntimeInternals,
  key: string,
  options: { reason?: string; by?: Controller } | undefined,
): Promise<boolean> {
  const by = options?.by;
  if (by !== undefined) {
    await internals.withSession(key, (live) => {
      assertMayControl(internals.admission.authority, live, 'stop', by);
      return Promise.resolve();
    });
  }
  return abortSession(internals, key, options?.reason ?? 'aborted by the caller');
}

/** Create the handle of session `key` (already validated). */
export function createSessionHandle(internals: RuntimeInternals, key: string): Session {
  const { withSession } = internals;
  const session: Session = {
    key,
    send: (input, options) => sendMessage(internals, key, input, options),
    steer: (input) => session.send(input, { mode: 'steer' }),
    abort: (options) => abortAs(internals, key, options),
    async waitForEnd(options) {
      const timeoutMs = parseTimeout(options);
      // Through the gate: a session that is not live yet (startup recovery, hibernated) may hold a paused run.
      return withSession(key, (live) => waitForRun(internals, live, timeoutMs));
    },
    status: () => sessionStatus(internals, key),
    ...sessionReads(internals, key),
    ...sessionSettings(internals, key),
    queue: createSessionQueue(internals, key),
    events: (options = {}) => sessionEvents(internals, key, options),
    transcript: () => internals.services.ledger.listTurns(key),
    runs: () => internals.services.ledger.listRuns(key),
    async approve(input) {
      assertOpen(internals);
      await withSession(key, (live) => approveCall(internals, live, input));
    },
    async supplyToolResult(input) {
      assertOpen(internals);
      await withSession(key, (live) => supplyResult(internals, live, input));
    },
    async undo(runId, options) {
      assertOpen(internals);
      const decided = parseUndoOptions(options);
      const id = await assertUndoable(internals, key, runId);
      return withSession(key, (live) => startUndo(sessionScopeOf(internals, live), id, decided));
    },
    async executePlan(plan, options) {
      assertOpen(internals);
      return withSession(key, (live) => executePlan(internals, live, plan, options ?? {}));
    },
    async approvePlan(input) {
      assertOpen(internals);
      return withSession(key, (live) => approvePlan(internals, live, input));
    },
    async reportDeliveryInDoubt(input) {
      assertOpen(internals);
      const { consumer, runId, blockIndex, reason } = parseDeliveryInDoubt(input);
      await withSession(key, (live) => {
        internals.emit(live, { type: 'delivery.in_doubt', runId, consumer, blockIndex, reason });
        return Promise.resolve();
      });
    },
  };
  return session;
}
