import { assign, enqueueActions, setup, type ActorRefFrom, type SnapshotFrom } from 'xstate';
import type { Clock } from '../core/index.js';
import type { IdGenerator } from '../core/index.js';
import type { AbortStatus } from '../runner/index.js';
import type { ExecuteRun } from '../runner/index.js';
import { abortRun, startRun, steerRun } from './run-handle.js';
import { endRun, removeQueued, returnRun, takeNextRun } from './session-queue.js';
import {
  admissionOf,
  applyAdmission,
  settleAdmitted,
  type AdmitActivity,
  type AdmitPlace,
} from './session-admission.js';
import { idleAdmission, runningAdmission, type AdmitGuardParams } from './session-admission-states.js';
import {
  initialSessionContext,
  type ActiveRun,
  type RunSettled,
  type SessionContext,
  type SessionEvent,
} from './session-context.js';
import type { RunPaused, RunSummary } from '../runner/index.js';
import {
  awaitToolResults,
  pauseRun,
  continueRun,
  settlePausedCall,
  steerMessageOf,
  unadmittedItem,
  waitingCalls,
} from './session-pause.js';
import { awaitingApprovalState, awaitingToolResultsState } from './session-paused-states.js';
import { applyPlanEvent, heldPlans, planEnding } from './session-plans.js';
import { settledResult, withoutUnobservedEnd, withUnobservedEnd } from './session-run-settled.js';
import { configured } from './session-configure.js';
import type { SessionSettings } from './session-record.js';

/** What the session machine needs from the runtime. One machine serves every session of a runtime. */
export interface SessionMachineDeps {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Start a run: lanes, ledger, turn loop. Resolves with the summary once the run ended and was recorded. */
  readonly executeRun: ExecuteRun;
  /** Called when a session goes idle with nothing queued (it may hibernate after a while). */
  readonly onIdle: (sessionKey: string) => void;
  /** Called when a run ended and the session has moved on. */
  readonly onRunEnded: (sessionKey: string, summary: RunSummary) => void;
  /** Called when a run paused for approval or tool results. */
  readonly onRunPaused: (sessionKey: string, paused: RunPaused) => void;
  /** How long a paused run waits before it continues without the missing decisions and results. */
  readonly pauseTimeoutMs: number;
  /** End a plan run the session holds: abort it when it runs, close it when it is paused. */
  readonly endPlan: (sessionKey: string, runId: string, status: AbortStatus, reason: string) => void;
}

/** Whether the session actor still runs (a stopped one is sent nothing). */
function isActive(actor: { getSnapshot(): { status: string } }): boolean {
  return actor.getSnapshot().status === 'active';
}

/** Input of a session actor: its key and, when hydrating, nothing else (the snapshot carries the context). */
export interface SessionInput {
  readonly sessionKey: string;
  /** The settings of the session's ledger row (a new session has none). @default {} */
  readonly settings?: SessionSettings;
}

/** Build the session machine (XState v5) for one runtime: states of docs/architecture.md, "The session actor". */
export function createSessionMachine(deps: SessionMachineDeps) {
  const { clock } = deps;
  return setup({
    types: {
      context: {} as SessionContext,
      events: {} as SessionEvent,
      input: {} as SessionInput,
      emitted: {} as RunSettled,
    },
    guards: {
      queueEmpty: ({ context }) => context.queue.length === 0,
      planHolds: ({ context }) => heldPlans(context).length > 0,
      drainDue: ({ context }) => context.drainAt !== null && context.drainAt <= clock.now(),
      pausedFor: ({ event }, state: 'awaiting_approval' | 'awaiting_tool_results') =>
        event.type === 'RUN.PAUSED' && event.paused.state === state,
      nothingWaits: ({ context }) => waitingCalls(context) === 0,
      noApprovalWaits: ({ context }) => waitingCalls(context, 'approval') === 0,
      // The pure admission policy, with the state's activity and the context's queue (session-admission.ts).
      admits: ({ context, event }, params: AdmitGuardParams) =>
        event.type === 'ADMIT' && admissionOf(params.activity, context, event).kind === params.kind,
    },
    delays: {
      drainDelay: ({ context }) => Math.max(0, (context.drainAt ?? clock.now()) - clock.now()),
      pauseDelay: ({ context }) => Math.max(0, (context.pause?.until ?? clock.now()) - clock.now()),
    },
    actions: {
      // A drain the admission let through at once makes the admitted message `started`.
      takeNextRun: assign(({ context }) =>
        settleAdmitted(takeNextRun(context, deps.ids('run'), clock.now())),
      ),
      admit: assign(({ context, event }, params: { activity: AdmitActivity; place: AdmitPlace }) =>
        event.type === 'ADMIT'
          ? applyAdmission(context, event, params.activity, params.place, () => deps.ids('run'))
          : context,
      ),
      // The run is a plain object the machine owns (run-handle.ts): entering `running` starts it, its end comes
      // back as RUN.DONE / RUN.PAUSED / RUN.NOT_STARTED, and steering and aborts reach it directly.
      startRun: ({ context, self }) => {
        const report = { send: (event: SessionEvent) => self.send(event), active: () => isActive(self) };
        startRun(deps.executeRun, clock, context.sessionKey, context.run as ActiveRun, report);
      },
      steerRun: ({ context, event }) => {
        if (event.type !== 'ADMIT') return;
        steerRun(context.run, steerMessageOf(event.item));
      },
      interruptRun: ({ context }) => abortRun(context.run, 'interrupted', 'interrupted by a new message'),
      abortRun: ({ context, event }) => {
        if (event.type === 'ABORT') abortRun(context.run, event.status, event.reason);
      },
      idle: ({ context }) => deps.onIdle(context.sessionKey),
      endRun: assign(({ context, event }) => {
        if (event.type !== 'RUN.DONE') return context;
        const queued = new Set(context.queue.map((item) => item.messageId));
        const unadmitted = event.unadmitted.filter((message) => !queued.has(message.messageId));
        return withUnobservedEnd(
          endRun(context, unadmitted, unadmittedItem(event.at), event.at),
          event.summary,
        );
      }),
      runEnded: ({ context, event }) => {
        if (event.type === 'RUN.DONE') deps.onRunEnded(context.sessionKey, event.summary);
      },
      pauseRun: assign(({ context, event }) => {
        if (event.type !== 'RUN.PAUSED') return context;
        const returned = event.unadmitted.map(unadmittedItem(event.at));
        return withoutUnobservedEnd(
          pauseRun(context, event.paused, returned, event.at + deps.pauseTimeoutMs),
        );
      }),
      runPaused: ({ context, event }) => {
        if (event.type === 'RUN.PAUSED') deps.onRunPaused(context.sessionKey, event.paused);
      },
      continueRun: assign(({ context }) => continueRun(context)),
      awaitToolResults: assign(({ context }) => awaitToolResults(context)),
      planChanged: assign(({ context, event }) => applyPlanEvent(context, event)),
      // `waitForEnd()` listens for this (actor.on): a run's or a plan run's pause or end, after its events went out.
      settled: enqueueActions(({ event, enqueue }) => {
        const result = settledResult(event);
        if (result !== undefined) enqueue.emit({ type: 'run.settled', result });
      }),
      // An abort or an interrupting message ends the plan runs the session holds, running (aborted: the step in
      // flight sees its signal) or paused (closed); the interrupting message then runs first.
      endPlans: ({ context, event }) => {
        const ending = planEnding(event);
        if (ending === undefined) return;
        for (const { runId } of heldPlans(context))
          deps.endPlan(context.sessionKey, runId, ending.status, ending.reason);
      },
      settlePaused: assign(({ context, event }) =>
        event.type === 'PAUSE.SETTLED' ? settlePausedCall(context, event.turn, event.position) : context,
      ),
      abortPaused: assign(({ context, event }) =>
        event.type === 'ABORT'
          ? continueRun(context, { status: event.status, reason: event.reason })
          : context,
      ),
    },
  }).createMachine({
    id: 'session',
    context: ({ input }) => ({ ...initialSessionContext(input.sessionKey), ...input.settings }),
    initial: 'idle',
    on: {
      CANCEL: { actions: assign(({ context, event }) => removeQueued(context, event.messageIds)) },
      PREFER_PROFILE: { actions: assign({ preferredProfile: ({ event }) => event.profileId }) },
      CONFIGURE: { actions: assign(({ context, event }) => configured(context, event)) },
      CONFIGURE_TOOLS: { actions: assign(({ context, event }) => configured(context, event)) },
      'END.OBSERVED': { actions: assign(({ context, event }) => withoutUnobservedEnd(context, event.runId)) },
      'PLAN.HELD': { actions: 'planChanged' },
      'PLAN.PAUSED': { actions: ['planChanged', 'settled'] },
      'PLAN.ENDED': { actions: ['planChanged', 'settled'] },
    },
    states: {
      idle: {
        initial: 'check',
        on: {
          ABORT: { actions: 'endPlans' },
          // A plan held or let go: the queue waits for it, or drains now.
          'PLAN.HELD': { target: '.check', reenter: true, actions: 'planChanged' },
          'PLAN.PAUSED': { target: '.check', reenter: true, actions: ['planChanged', 'settled'] },
          'PLAN.ENDED': { target: '.check', reenter: true, actions: ['planChanged', 'settled'] },
          CANCEL: {
            target: '.check',
            reenter: true,
            actions: assign(({ context, event }) => removeQueued(context, event.messageIds)),
          },
          HYDRATED: { target: '.check', reenter: true },
        },
        states: {
          check: {
            always: [
              { guard: 'planHolds', target: 'held' },
              { guard: 'queueEmpty', target: 'empty' },
              { guard: 'drainDue', target: '#session.running', actions: 'takeNextRun' },
              { target: 'waiting' },
            ],
          },
          empty: { entry: 'idle', on: idleAdmission('idle') },
          // A plan run holds the session: nothing starts until it ends (PLAN.ENDED re-checks).
          held: { on: idleAdmission('held') },
          waiting: {
            after: { drainDelay: { target: '#session.running', actions: 'takeNextRun' } },
            on: idleAdmission('waiting'),
          },
        },
      },
      // The run's phase is data on its handle (activityOf and the admission guards read it), not a substate.
      running: {
        entry: 'startRun',
        on: {
          ...runningAdmission(),
          ABORT: { actions: 'abortRun' },
          // Straight to idle.empty when nothing is left to run (the common case; no eventless step).
          'RUN.DONE': [
            {
              guard: ({ context, event }) =>
                context.queue.length === 0 &&
                event.unadmitted.length === 0 &&
                heldPlans(context).length === 0,
              target: '#session.idle.empty',
              actions: [{ type: 'endRun' }, { type: 'runEnded' }, { type: 'settled' }],
            },
            { target: 'idle', actions: [{ type: 'endRun' }, { type: 'runEnded' }, { type: 'settled' }] },
          ],
          'RUN.PAUSED': [
            {
              guard: { type: 'pausedFor', params: 'awaiting_approval' },
              target: 'awaiting_approval',
              actions: [{ type: 'pauseRun' }, { type: 'runPaused' }, { type: 'settled' }],
            },
            {
              target: 'awaiting_tool_results',
              actions: [{ type: 'pauseRun' }, { type: 'runPaused' }, { type: 'settled' }],
            },
          ],
          'RUN.NOT_STARTED': {
            target: 'idle',
            actions: assign(({ context, event }) => returnRun(context, event.at)),
          },
        },
      },
      awaiting_approval: awaitingApprovalState,
      awaiting_tool_results: awaitingToolResultsState,
    },
  });
}

/** The session machine of a runtime. */
export type SessionMachine = ReturnType<typeof createSessionMachine>;
/** A running session actor. */
export type SessionActor = ActorRefFrom<SessionMachine>;
/** A session actor's snapshot. */
export type SessionSnapshot = SnapshotFrom<SessionMachine>;
