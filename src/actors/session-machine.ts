import {
  assign,
  createActor,
  enqueueActions,
  setup,
  type Actor,
  type ActorOptions,
  type SnapshotFrom,
} from 'xstate';
import type { Clock, IdGenerator } from '../core/index.js';
import type { AbortStatus, ExecuteRun, RunSummary, RunResult, SessionPort } from '../runner/index.js';
import { abortRun, closeRun, startOrHold, startRun, steerRun } from './session-runs.js';
import {
  beginWork,
  endRun,
  isWorkRun,
  pendingWork,
  queueWork,
  takeWork,
  removeQueued,
  returnRun,
  takeNextRun,
  initialSessionContext,
  type ActiveRun,
  type SessionEmitted,
  type SessionContext,
  type SessionEvent,
  type SessionSettings,
} from './session-context.js';
import {
  admissionOf,
  applyAdmission,
  previewOf,
  activityIn,
  type SessionPlace,
} from './session-admission.js';
import {
  awaitToolResults,
  pauseRun,
  continueRun,
  answerPausedCall,
  decisionOn,
  pauseStateAfter,
  steerMessageOf,
  unadmittedItem,
  waitingCalls,
  applyPlanEvent,
  heldPlans,
  planEnding,
  planStoppedResult,
  adoptPausedPlan,
  resumePlan,
} from './session-pause.js';
import type { SessionActivity } from '../policies/index.js';

/** What the session machine needs from the runtime. One machine serves every session of a runtime. */
export interface SessionMachineDeps {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Start a run: lanes, ledger, turn loop. Resolves with the summary once the run ended and was recorded. */
  readonly executeRun: ExecuteRun;
  /** The port a run of this session emits its events through. */
  readonly portOf: (sessionKey: string) => SessionPort;
  /** Called when a session goes idle with nothing queued (it may hibernate after a while). */
  readonly onIdle: (sessionKey: string) => void;
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
      emitted: {} as SessionEmitted,
    },
    guards: {
      queueEmpty: ({ context }) => context.queue.length === 0,
      workPending: ({ context }) => pendingWork(context).length > 0,
      workRun: ({ context }) => isWorkRun(context.run),
      // A plan reported its pause (PLAN.PAUSED) or was restored paused: the machine adopts it as its paused run.
      planPaused: ({ context }) => heldPlans(context).some((plan) => plan.state === 'awaiting_approval'),
      // Only a paused agent run expires; a paused plan waits for approvePlan, an abort or an interrupting message.
      pauseExpires: ({ context }) => context.run?.kind !== 'plan',
      resumesPlan: ({ context, event }) =>
        event.type === 'START' && event.kind === 'plan' && isPlanRun(context, event.runId),
      endsPlan: ({ context, event }) => event.type === 'PLAN.ENDED' && isPlanRun(context, event.runId),
      closesPlan: ({ context, event }) =>
        event.type === 'PLAN.ENDED' &&
        isPlanRun(context, event.runId) &&
        context.run?.resume?.abort !== undefined,
      planHolds: ({ context }) => heldPlans(context).length > 0,
      drainDue: ({ context }) => context.drainAt !== null && context.drainAt <= clock.now(),
      pausedFor: ({ event }, state: 'awaiting_approval' | 'awaiting_tool_results') =>
        event.type === 'RUN.PAUSED' && event.paused.state === state,
      // An answer to a waiting call of the paused run (approve, reject, edit, a supplied result): `decisionOn`.
      decides: ({ context, event }) => event.type === 'DECIDE' && decisionOn(context, event).ok,
      nothingWaits: ({ context }) => waitingCalls(context) === 0,
      noApprovalWaits: ({ context }) => waitingCalls(context, 'approval') === 0,
      // The pure admission policy at the state's place, with the context's queue (session-admission.ts).
      admits: ({ context, event }, params: AdmitGuardParams) =>
        event.type === 'ADMIT' && admissionOf(params.place, context, event).kind === params.kind,
      // An ADMIT of a message not written yet: selected (never sent) by `previewAdmission`, to learn the decision.
      previewing: ({ event }) => event.type === 'ADMIT' && event.recorded === undefined,
    },
    delays: {
      drainDelay: ({ context }) => Math.max(0, (context.drainAt ?? clock.now()) - clock.now()),
      pauseDelay: ({ context }) => Math.max(0, (context.pause?.until ?? clock.now()) - clock.now()),
    },
    actions: {
      // The queue drains into a run; `run.taken` tells an admission in progress that its message is in it.
      takeNextRun: enqueueActions(({ context, enqueue }) => {
        const next = takeNextRun(context, deps.ids('run'), clock.now());
        enqueue.assign(() => next);
        if (next.run !== null)
          enqueue.emit({ type: 'run.taken', runId: next.run.runId, messageIds: next.run.messageIds });
      }),
      // Decide on a durable message, apply the decision and emit its outcome (`message.admitted`).
      admit: enqueueActions(({ context, event, enqueue }, params: { place: SessionPlace }) => {
        if (event.type !== 'ADMIT') return;
        const runId = () => deps.ids('run');
        const { next, outcome } = applyAdmission(context, event, params.place, runId);
        enqueue.assign(() => next);
        enqueue.emit({ type: 'message.admitted', outcome });
      }),
      // Decide on a message not written yet and emit the decision; nothing changes (see `previewing`).
      preview: enqueueActions(({ context, event, enqueue }, params: { place: SessionPlace }) => {
        if (event.type === 'ADMIT') enqueue.emit(previewOf(params.place, context, event));
      }),
      // The run is a plain object the machine owns (session-runs.ts): entering `running` starts it, its end comes
      // back as RUN.DONE / RUN.PAUSED / RUN.NOT_STARTED, and steering and aborts reach it directly.
      // The run starts once this step is done (`run.starting`, `createSessionActor`): what it reads of its session
      // then sees the snapshot that holds it.
      startRun: enqueueActions(({ context, self, enqueue }) => {
        const run = context.run as ActiveRun;
        // A paused plan an abort or an interrupting message ends is closed, not run: PLAN.ENDED says it is.
        const closing = run.kind === 'plan' ? run.resume?.abort : undefined;
        if (closing !== undefined) {
          closeRun(run);
          deps.endPlan(context.sessionKey, run.runId, closing.status, closing.reason);
          return;
        }
        const { sessionKey } = context;
        const report = {
          send: (event: SessionEvent) => self.send(event),
          active: () => isActive(self),
        };
        enqueue.emit({ type: 'run.starting', start: () => startRun(deps, clock, sessionKey, run, report) });
      }),
      steerRun: ({ context, event }) => {
        if (event.type !== 'ADMIT') return;
        steerRun(context.run, steerMessageOf(event.item));
      },
      interruptRun: ({ context }) => abortRun(context.run, 'interrupted', 'interrupted by a new message'),
      abortRun: ({ context, event }) => {
        if (event.type === 'ABORT') abortRun(context.run, event.status, event.reason);
      },
      // A plan run or an undo handed to the session (START): it runs now, or after the active run.
      beginWork: assign(({ context, event }) =>
        event.type === 'START' ? beginWork(context, event, event.at) : context,
      ),
      queueWork: assign(({ context, event }) =>
        event.type === 'START' ? queueWork(context, event) : context,
      ),
      takeWork: assign(({ context }) => takeWork(context, clock.now())),
      adoptPausedPlan: assign(({ context }) => adoptPausedPlan(context, clock.now())),
      resumePlan: assign(({ context, event }) =>
        event.type === 'START' ? resumePlan(context, event.job) : context,
      ),
      // A paused plan closed without resuming (abort): the session moves on as after any run.
      endPausedPlan: assign(({ context }) =>
        endRun({ ...context, pause: null }, [], unadmittedItem(0), clock.now()),
      ),
      // A plan run or an undo stopped: the session moves on as after any run (a plan's own end or pause reached
      // the machine through its PLAN.* events, which `waitForEnd()` hears; an undo is no run it reports).
      endWork: assign(({ context, event }) => {
        const at = 'at' in event ? event.at : clock.now();
        const returned = event.type === 'RUN.DONE' || event.type === 'RUN.PAUSED' ? event.unadmitted : [];
        const queued = new Set(context.queue.map((item) => item.messageId));
        const unadmitted = returned.filter((message) => !queued.has(message.messageId));
        return endRun(context, unadmitted, unadmittedItem(at), at);
      }),
      idle: ({ context }) => deps.onIdle(context.sessionKey),
      endRun: assign(({ context, event }) => {
        if (event.type !== 'RUN.DONE') return context;
        const queued = new Set(context.queue.map((item) => item.messageId));
        const unadmitted = event.unadmitted.filter((message) => !queued.has(message.messageId));
        return withLastEnd(endRun(context, unadmitted, unadmittedItem(event.at), event.at), event.summary);
      }),
      pauseRun: assign(({ context, event }) => {
        if (event.type !== 'RUN.PAUSED') return context;
        const returned = event.unadmitted.map(unadmittedItem(event.at));
        return withoutLastEnd(pauseRun(context, event.paused, returned, event.at + deps.pauseTimeoutMs));
      }),
      correctEnd: assign(({ context, event }) =>
        event.type === 'RUN.CORRECTED' && context.lastEnd?.runId === event.summary.runId
          ? withLastEnd(context, event.summary)
          : context,
      ),
      continueRun: assign(({ context }) => continueRun(context)),
      awaitToolResults: assign(({ context }) => awaitToolResults(context)),
      planChanged: assign(({ context, event }) => applyPlanEvent(context, event)),
      // `waitForEnd()` listens for this (actor.on): a run's or a plan run's pause or end, after its events went out.
      settled: enqueueActions(({ event, enqueue }) => {
        const result = settledResult(event);
        if (result === undefined) return;
        const written = event.type === 'PLAN.PAUSED' ? event.written : undefined;
        enqueue.emit({ type: 'run.settled', result, ...(written === undefined ? {} : { written }) });
      }),
      // An abort or an interrupting message ends the plan runs the session holds, running (aborted: the step in
      // flight sees its signal) or paused (closed); the interrupting message then runs first.
      endPlans: ({ context, event }) => {
        const ending = planEnding(event);
        if (ending === undefined) return;
        for (const { runId } of heldPlans(context))
          deps.endPlan(context.sessionKey, runId, ending.status, ending.reason);
      },
      // An answer answers the call it names (the paused state's `always` moves on once nothing waits).
      answerCall: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'DECIDE') return;
        const verdict = decisionOn(context, event);
        if (!verdict.ok) return;
        const { call } = verdict;
        const next = answerPausedCall(context, call.turn, call.position);
        enqueue.assign(() => next);
        const state = pauseStateAfter(next);
        enqueue.emit({ type: 'call.answered', call, ...(state === undefined ? {} : { state }) });
      }),
      refuseDecision: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'DECIDE') return;
        const verdict = decisionOn(context, event);
        if (verdict.ok) return;
        const { code, message } = verdict;
        enqueue.emit({ type: 'decision.refused', toolCallId: event.toolCallId, code, message });
      }),
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
      // Decided in any state: only a paused run has calls that wait (`previewDecision` selects, never sends, it).
      DECIDE: [{ guard: 'decides', actions: 'answerCall' }, { actions: 'refuseDecision' }],
      'PLAN.HELD': { actions: 'planChanged' },
      'PLAN.PAUSED': { actions: ['planChanged', 'settled'] },
      'PLAN.ENDED': { actions: ['planChanged', 'settled'] },
      // The close of the run it adopted wrote another end (session-runs.ts): the last end is the one the ledger holds.
      'RUN.CORRECTED': { actions: 'correctEnd' },
    },
    states: {
      idle: {
        initial: 'check',
        on: {
          ABORT: { actions: 'endPlans' },
          START: { target: '#session.running', actions: 'beginWork' },
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
              { guard: 'workPending', target: '#session.running', actions: 'takeWork' },
              { guard: 'planPaused', target: '#session.awaiting_approval', actions: 'adoptPausedPlan' },
              { guard: 'planHolds', target: 'held' },
              { guard: 'queueEmpty', target: 'empty' },
              { guard: 'drainDue', target: '#session.running', actions: 'takeNextRun' },
              { target: 'waiting' },
            ],
          },
          empty: { entry: 'idle', on: idleAdmission('idle') },
          // A plan a crash cut holds the session until recovery hands it to the machine (START); a paused plan
          // is adopted as the paused run (`planPaused` above).
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
          START: { actions: 'queueWork' },
          // A paused plan the machine is closing ended (recorded): the session moves on.
          'PLAN.ENDED': [
            { guard: 'closesPlan', target: 'idle', actions: ['planChanged', 'endWork', 'settled'] },
            { actions: ['planChanged', 'settled'] },
          ],
          // Straight to idle.empty when nothing is left to run (the common case; no eventless step).
          'RUN.DONE': [
            workEnd,
            {
              guard: ({ context, event }) =>
                context.queue.length === 0 &&
                event.unadmitted.length === 0 &&
                heldPlans(context).length === 0 &&
                pendingWork(context).length === 0,
              target: '#session.idle.empty',
              actions: [{ type: 'endRun' }, { type: 'settled' }],
            },
            { target: 'idle', actions: [{ type: 'endRun' }, { type: 'settled' }] },
          ],
          'RUN.PAUSED': [
            workEnd,
            {
              guard: { type: 'pausedFor', params: 'awaiting_approval' },
              target: 'awaiting_approval',
              actions: [{ type: 'pauseRun' }, { type: 'settled' }],
            },
            {
              target: 'awaiting_tool_results',
              actions: [{ type: 'pauseRun' }, { type: 'settled' }],
            },
          ],
          'RUN.NOT_STARTED': [
            workEnd,
            { target: 'idle', actions: assign(({ context, event }) => returnRun(context, event.at)) },
          ],
        },
      },
      awaiting_approval: awaitingApprovalState,
      awaiting_tool_results: awaitingToolResultsState,
    },
  });
}

/** True when the session's run is plan run `runId`. */
function isPlanRun(context: SessionContext, runId: string): boolean {
  return context.run?.kind === 'plan' && context.run.runId === runId;
}

/** A plan run or an undo stopped (however it reports it): the session moves on. */
const workEnd = { guard: 'workRun', target: 'idle', actions: 'endWork' } as const;

/** The session machine of a runtime. */
export type SessionMachine = ReturnType<typeof createSessionMachine>;
/** A running session actor. */
export type SessionActor = Actor<SessionMachine>;

/** A session's actor (not started): the runs its machine enters `running` for start from its `run.starting`. */
export function createSessionActor(
  machine: SessionMachine,
  options: ActorOptions<SessionMachine> & { readonly input: SessionInput },
): SessionActor {
  const actor = createActor(machine, options);
  actor.on('run.starting', ({ start }) => startOrHold(actor, start));
  return actor;
}

/** A session actor's snapshot. */
export type SessionSnapshot = SnapshotFrom<SessionMachine>;

/**
 * ADMIT in an idle state: a message that starts a run goes straight to `running`; anything else re-checks the
 * queue (an interrupting message also ends a paused plan run the session holds).
 */
export function idleAdmission(place: 'idle' | 'waiting' | 'held') {
  const admit = { type: 'admit', params: { place } } as const;
  return {
    ADMIT: [
      { guard: 'previewing', actions: { type: 'preview', params: { place } } },
      {
        guard: { type: 'admits', params: { place, kind: 'start' } },
        target: '#session.running',
        actions: admit,
      },
      {
        guard: { type: 'admits', params: { place, kind: 'interrupt' } },
        target: '#session.idle.check',
        actions: [admit, { type: 'endPlans' }],
      },
      { target: '#session.idle.check', actions: admit },
    ],
  } as const;
}

/**
 * ADMIT while a run runs: a steer reaches the run, an interrupting message aborts it, the rest queues. The
 * activity at `running` is the run's phase, read off its handle when the guard runs (`activityIn`).
 */
export function runningAdmission() {
  const place = 'running';
  const admit = { type: 'admit', params: { place } } as const;
  return {
    ADMIT: [
      { guard: 'previewing', actions: { type: 'preview', params: { place } } },
      {
        guard: { type: 'admits', params: { place, kind: 'steer' } },
        actions: [admit, { type: 'steerRun' }],
      },
      {
        guard: { type: 'admits', params: { place, kind: 'interrupt' } },
        actions: [admit, { type: 'interruptRun' }],
      },
      { actions: admit },
    ],
  } as const;
}

/** ADMIT while the run is paused: an interrupting message ends the paused run (it runs first), the rest queues. */
export function pausedAdmission(place: 'awaiting_approval' | 'awaiting_tool_results') {
  const admit = { type: 'admit', params: { place } } as const;
  return {
    ADMIT: [
      { guard: 'previewing', actions: { type: 'preview', params: { place } } },
      {
        guard: { type: 'admits', params: { place, kind: 'interrupt' } },
        target: '#session.running',
        actions: admit,
      },
      { actions: admit },
    ],
  } as const;
}

/** The decision kinds an ADMIT guard tells apart. */
export type AdmitKind = 'start' | 'steer' | 'enqueue' | 'interrupt';

/** Params of the `admits` guard and the `admit` action. */
export interface AdmitGuardParams {
  readonly place: SessionPlace;
  readonly kind: AdmitKind;
}

/**
 * What a paused session does with events (both pause states): resume a paused plan, end the paused run on an
 * abort. Answers to its calls are DECIDE (any state); messages are admitted by `pausedAdmission` (a steer is
 * queued as a followup; an interrupting message ends it).
 */
const pausedEvents = {
  // approvePlan resumes a paused plan; any other plan run or undo waits for the paused run to end.
  START: [{ guard: 'resumesPlan', target: 'running', actions: 'resumePlan' }, { actions: 'queueWork' }],
  // A paused plan closed by an abort (`endHeldPlan`) lets the session go.
  'PLAN.ENDED': [
    { guard: 'endsPlan', target: '#session.idle', actions: ['planChanged', 'endPausedPlan', 'settled'] },
    { actions: ['planChanged', 'settled'] },
  ],
  ABORT: { target: 'running', actions: 'abortPaused' },
} as const;

/** The run waits for an operator's decisions (and maybe tool results); it resumes once nothing waits. */
export const awaitingApprovalState = {
  always: [
    { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
    { guard: 'noApprovalWaits', target: 'awaiting_tool_results', actions: 'awaitToolResults' },
  ],
  after: { pauseDelay: { guard: 'pauseExpires', target: 'running', actions: 'continueRun' } },
  on: {
    ...pausedEvents,
    ...pausedAdmission('awaiting_approval'),
    HYDRATED: { target: 'awaiting_approval', reenter: true },
  },
} as const;

/** The run waits for results of deferred calls only; it resumes once nothing waits. */
export const awaitingToolResultsState = {
  always: { guard: 'nothingWaits', target: 'running', actions: 'continueRun' },
  after: { pauseDelay: { target: 'running', actions: 'continueRun' } },
  on: {
    ...pausedEvents,
    ...pausedAdmission('awaiting_tool_results'),
    HYDRATED: { target: 'awaiting_tool_results', reenter: true },
  },
} as const;

/**
 * The context with the session's settings changed: the queue-settings override merged, or the tool layer set
 * (undefined clears it; set, not left out, because XState's `assign` merges what it is given into the context).
 */
export function configured(context: SessionContext, event: SessionEvent): SessionContext {
  if (event.type === 'CONFIGURE') return { ...context, override: { ...context.override, ...event.override } };
  if (event.type !== 'CONFIGURE_TOOLS') return context;
  return { ...context, toolPolicy: event.layer };
}

/** Stop a session actor; a run still in flight is aborted first (the actor owns it, nothing else would end it). */
export function stopSession(actor: SessionActor): void {
  abortRun(actor.getSnapshot().context.run, 'aborted', 'session stopped');
  actor.stop();
}

/** The run result an event settles (a run's or a plan run's end or pause), for the `run.settled` emit. */
export function settledResult(event: SessionEvent): RunResult | undefined {
  if (event.type === 'RUN.DONE') return event.summary;
  if (event.type === 'RUN.PAUSED') return event.paused;
  return planStoppedResult(event);
}

/** The context with `lastEnd` set to the run that just ended. */
export function withLastEnd(context: SessionContext, summary: RunSummary): SessionContext {
  return { ...context, lastEnd: summary };
}

/**
 * The context without a last end (a run paused: `waitForEnd()` answers the pause). The field is set to undefined,
 * not left out: XState's `assign` merges what it is given into the context.
 */
export function withoutLastEnd(context: SessionContext): SessionContext {
  if (context.lastEnd === undefined) return context;
  return { ...context, lastEnd: undefined };
}

/** The session states `status()` reports. */
export type SessionState =
  'idle' | 'running' | 'streaming' | 'compacting' | 'awaiting_approval' | 'awaiting_tool_results';

/** Where the session machine stands (session-admission.ts, `SessionPlace`), read off its snapshot. */
export function placeOf(snapshot: SessionSnapshot): SessionPlace {
  const value = snapshot.value;
  if (typeof value === 'string') return value;
  return value.idle === 'held' || value.idle === 'waiting' ? value.idle : 'idle';
}

/**
 * What the session is doing, read off the actor's snapshot: the same reading the admission guards make at the
 * machine's place. A plan run the session holds reads like an agent run: paused for approval
 * (`awaiting_approval`), else busy and not steerable (`settling`, shown as running).
 */
export function activityOf(snapshot: SessionSnapshot): SessionActivity {
  return activityIn(placeOf(snapshot), snapshot.context);
}

/** The state `status()` reports for an activity. */
export function stateOf(activity: SessionActivity): SessionState {
  switch (activity) {
    case 'idle':
    case 'waiting':
      return 'idle';
    case 'streaming':
    case 'compacting':
    case 'awaiting_approval':
    case 'awaiting_tool_results':
      return activity;
    case 'starting':
    case 'tools':
    case 'settling':
      return 'running';
  }
}
