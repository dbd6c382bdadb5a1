import type { CallbackLogicFunction } from 'xstate';
import type { Clock } from '../core/clock.js';
import { runAbortReason, type AbortStatus } from '../runner/run-abort.js';
import type { ExecuteRun, RunRequest } from '../runner/run-request.js';
import { createSteerInbox, type SteerMessage } from '../runner/steer-inbox.js';
import type { ActiveRun, SessionEvent } from './session-context.js';
import { isRunPaused } from '../runner/run-summary.js';

/** What the session actor tells its run: a steer message for the next boundary, or abort. */
export type RunActorEvent =
  | { readonly type: 'STEER'; readonly message: SteerMessage }
  | { readonly type: 'ABORT'; readonly status: AbortStatus; readonly reason: string };

/** Input of the invoked run actor. */
export interface RunActorInput {
  readonly sessionKey: string;
  readonly run: ActiveRun;
}

/**
 * The invoked run actor: owns the run's AbortController and steer inbox, forwards STEER and ABORT from the
 * session actor, and reports phases and the end back to it.
 */
export function createRunActor(
  executeRun: ExecuteRun,
  clock: Clock,
): CallbackLogicFunction<RunActorEvent, SessionEvent, RunActorInput> {
  return ({ input, sendBack, receive }) => {
    const controller = new AbortController();
    const steering = createSteerInbox();
    let stopped = false;
    const send = (event: SessionEvent): void => {
      if (!stopped) sendBack(event);
    };
    receive((event) => {
      if (event.type === 'STEER') steering.push(event.message);
      if (event.type === 'ABORT' && !controller.signal.aborted) {
        controller.abort(runAbortReason(event.status, event.reason));
      }
    });
    const request: RunRequest = {
      sessionKey: input.sessionKey,
      run: input.run,
      signal: controller.signal,
      steering,
      abort: (status, reason) => {
        if (!controller.signal.aborted) controller.abort(runAbortReason(status, reason));
      },
      setPhase: (phase) => send({ type: 'RUN.PHASE', phase }),
    };
    // A paused run that was aborted or interrupted meanwhile comes back only to end.
    const abort = input.run.resume?.abort;
    if (abort !== undefined) controller.abort(runAbortReason(abort.status, abort.reason));
    let settled = false;
    executeRun(request).then(
      (result) => {
        settled = true;
        const unadmitted: SteerMessage[] = steering.take();
        if (isRunPaused(result)) send({ type: 'RUN.PAUSED', paused: result, unadmitted, at: result.at });
        else send({ type: 'RUN.DONE', summary: result, unadmitted, at: result.endedAt });
      },
      () => {
        settled = true;
        send({ type: 'RUN.NOT_STARTED', at: clock.now() });
      },
    );
    return () => {
      stopped = true;
      // Stopped while the run still runs (the session actor was stopped): abort it. A run that ended has
      // nothing left to abort.
      if (!settled && !controller.signal.aborted)
        controller.abort(runAbortReason('aborted', 'session stopped'));
    };
  };
}
