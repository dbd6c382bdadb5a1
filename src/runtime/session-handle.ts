import type { RunSummary } from '../actors/run-summary.js';
import type { LiveSession } from '../actors/session-registry.js';
import { RuntimeError } from '../core/errors.js';
import type { RuntimeEvent } from '../core/events.js';
import type { RunRecord, TurnRecord } from '../ledger/ledger.js';
import { isRunActive } from '../policies/queue-admission.js';
import type { QueueSettingsInput } from '../policies/queue-settings.js';
import { admitMessage, type SendResult } from './admit-message.js';
import { streamEvents, type EventStreamOptions } from './event-stream.js';
import { parseInboundMessage, parseQueueSettings, type InboundMessageInput } from './inbound-message.js';
import { createSessionQueue, type SessionQueue } from './session-queue-handle.js';
import { activityOf, stateOf, type SessionState } from './session-activity.js';
import { assertOpen, type RuntimeInternals } from './runtime-internals.js';

/** What `status()` reports. */
export interface SessionStatus {
  readonly state: SessionState;
  readonly runId?: string;
  readonly queued: number;
}

/** What `waitForEnd()` resolves with. */
export type WaitResult =
  | { readonly status: 'idle' }
  | { readonly status: 'ended'; readonly run: RunSummary }
  | { readonly status: 'timeout' };

/** A chat session: feed messages in, steer, abort, wait, read its record. Cheap to get; hydrates lazily. */
export interface Session {
  readonly key: string;
  /** Accept a message; resolves once it is durable, with what became of it. */
  send(message: InboundMessageInput, options?: QueueSettingsInput): Promise<SendResult>;
  /** `send(text, { mode: 'steer' })`. */
  steer(message: InboundMessageInput): Promise<SendResult>;
  /** Abort the active run; resolves whether a run was active. */
  abort(options?: { reason?: string }): Promise<boolean>;
  /** Wait for the active run to end. @default timeoutMs 15000 (at least 100) */
  waitForEnd(options?: { timeoutMs?: number }): Promise<WaitResult>;
  status(): SessionStatus;
  /** Override this session's queue settings (merged into the current override; persisted). */
  configure(settings: QueueSettingsInput): Promise<void>;
  /** Make runs of this session try this auth profile first while it is available (`null` clears it; persisted). */
  preferProfile(profileId: string | null): Promise<void>;
  readonly queue: SessionQueue;
  /** Replay this session's recorded events after `after`, then follow live ones. */
  events(options?: EventStreamOptions): AsyncIterable<RuntimeEvent>;
  /** The turns recorded for this session, in order. */
  transcript(): Promise<TurnRecord[]>;
  /** The runs recorded for this session, in start order (status, times, usage, error, text). */
  runs(): Promise<RunRecord[]>;
}

function parseTimeout(options: { timeoutMs?: number } | undefined): number {
  const timeoutMs = options?.timeoutMs ?? 15_000;
  if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
    throw new RuntimeError(
      'invalid_input',
      'waitForEnd: timeoutMs must be a finite number of milliseconds >= 0',
    );
  }
  return Math.max(100, timeoutMs);
}

function waitOn(internals: RuntimeInternals, session: LiveSession, timeoutMs: number): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve) => {
    const waiter = (run: RunSummary): void => {
      internals.clock.clearTimeout(timer);
      resolve({ status: 'ended', run });
    };
    const timer = internals.clock.setTimeout(() => {
      session.waiters?.delete(waiter);
      resolve({ status: 'timeout' });
    }, timeoutMs);
    (session.waiters ??= new Set()).add(waiter);
  });
}

/** Wait for a live session's active run, if any. */
export function waitForRun(
  internals: RuntimeInternals,
  session: LiveSession,
  timeoutMs: number,
): Promise<WaitResult> {
  if (!isRunActive(activityOf(session.actor.getSnapshot()))) return Promise.resolve({ status: 'idle' });
  return waitOn(internals, session, timeoutMs);
}

/** Create the handle of session `key` (already validated). */
export function createSessionHandle(internals: RuntimeInternals, key: string): Session {
  const { registry, withSession } = internals;
  const session: Session = {
    key,
    async send(input, options) {
      assertOpen(internals);
      const message = parseInboundMessage(input);
      const settings = parseQueueSettings('send: options', options);
      return withSession(key, (live) => admitMessage(internals.admission, live, message, settings));
    },
    steer: (input) => session.send(input, { mode: 'steer' }),
    abort(options) {
      const reason = options?.reason ?? 'aborted by the caller';
      if (typeof reason !== 'string') {
        return Promise.reject(new RuntimeError('invalid_input', 'abort: reason must be a string'));
      }
      const live = registry.live(key);
      if (live === undefined || !isRunActive(activityOf(live.actor.getSnapshot())))
        return Promise.resolve(false);
      live.actor.send({ type: 'ABORT', status: 'aborted', reason });
      return Promise.resolve(true);
    },
    async waitForEnd(options) {
      const timeoutMs = parseTimeout(options);
      const live = registry.live(key);
      if (live === undefined) return { status: 'idle' };
      return waitForRun(internals, live, timeoutMs);
    },
    status() {
      const live = registry.live(key);
      if (live === undefined) return { state: 'idle', queued: 0 };
      const snapshot = live.actor.getSnapshot();
      const runId = snapshot.context.run?.runId;
      return {
        state: stateOf(activityOf(snapshot)),
        queued: snapshot.context.queue.length,
        ...(runId === undefined ? {} : { runId }),
      };
    },
    async configure(settings) {
      assertOpen(internals);
      const override = parseQueueSettings('configure', settings);
      await withSession(key, (live) => {
        live.override = { ...live.override, ...override };
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
    queue: createSessionQueue(internals, key),
    events: (options = {}) =>
      streamEvents(
        { ledger: internals.ledger, bus: internals.bus, closed: internals.closed },
        { ...options, sessionKey: key },
      ),
    transcript: () => internals.ledger.listTurns(key),
    runs: () => internals.ledger.listRuns(key),
  };
  return session;
}
