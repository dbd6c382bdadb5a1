import PQueue from 'p-queue';
import { z } from 'zod';
import { abortReason, maxDurationMs } from '../core/index.js';
import type { Clock } from '../core/index.js';
import { RuntimeError } from '../core/index.js';
import { createRateGate, type LaneRate, type RateGate } from './rate-gate.js';

export type { LaneRate } from './rate-gate.js';

/** A provider's own lane, separate from the shared one. */
export interface ProviderLaneOptions {
  /** Tasks running at once in this provider's lane. @default the shared lane's `concurrency` */
  concurrency?: number | undefined;
  /** Model requests per interval to this provider (taken by `pace`, one per call). @default no limit */
  rate?: LaneRate | undefined;
}

/** What `onWaited` receives when a task waited longer than `warnAfterMs` before it started. */
export interface LaneWaitInfo {
  /** 'global' or the provider name. */
  lane: string;
  waitedMs: number;
  /** 1-based position the task had in its lane's queue when it was enqueued. */
  position: number;
}

/** Options of `createGlobalLane`. */
export interface GlobalLaneOptions {
  /** Tasks running at once in the shared lane. @default 8 */
  concurrency?: number | undefined;
  /** Model requests per interval over the shared lane (taken by `pace`, one per call). @default no limit */
  rate?: LaneRate | undefined;
  /** Providers that get their own lane instead of the shared one. @default none */
  perProvider?: Record<string, ProviderLaneOptions> | undefined;
  /** A task that waited longer than this before starting is reported to `onWaited`. @default 2000 */
  warnAfterMs?: number | undefined;
  /** Measures how long tasks wait and times the start rate. */
  clock: Clock;
  /** Called when a task starts after waiting longer than `warnAfterMs`. @default none */
  onWaited?: ((info: LaneWaitInfo) => void) | undefined;
}

/** Per-task options of `GlobalLane.run`. */
export interface LaneTaskOptions {
  /** Use this provider's own lane when one is configured. */
  provider?: string;
  /** Aborts the task while it still waits (a running task handles the signal itself). */
  signal?: AbortSignal;
  /** Called instead of the lane's `onWaited` when this task waited longer than `warnAfterMs`. */
  onWaited?: (info: LaneWaitInfo) => void;
}

/** Waiting and running task counts of one lane. */
export interface LaneStats {
  pending: number;
  running: number;
}

/**
 * Caps runs in flight, shared or per provider, and paces model requests. Two limits, each counted where its
 * resource is spent: a run holds a concurrency slot for its whole segment (its context, its tools and its stream
 * live that long), while a provider counts requests, so the rate takes one start per model call (a run of 25 tool
 * turns takes 26).
 */
export interface GlobalLane {
  /**
   * Run `task` when the lane (the provider's own lane if configured, else the shared one) has a free slot; the
   * task holds it until it settles. The rate is not taken here: see `pace`.
   */
  run<T>(task: () => Promise<T>, options?: LaneTaskOptions): Promise<T>;
  /**
   * Take one start of the rate of `provider`'s lane (its own lane if configured, else the shared one) for one
   * model request: undefined when a start was free now (nothing to await), else a promise that resolves once
   * one is, in arrival order, or rejects with `signal`'s reason. A wait longer than `warnAfterMs` is reported.
   */
  pace(
    provider: string | undefined,
    options?: { signal?: AbortSignal; onWaited?: (info: LaneWaitInfo) => void },
  ): Promise<void> | undefined;
  /** Tasks waiting / running, per lane name ('global' or the provider name). */
  stats(): Record<string, LaneStats>;
  /** Stop intake: new run() calls reject with RuntimeError('runtime_closed'); waits for running tasks to finish; pending tasks still run. */
  close(): Promise<void>;
  readonly closed: boolean;
}

const sharedLaneName = 'global';

const rateSchema = z.object({
  limit: z.int().min(1),
  intervalMs: z.int().min(1).max(maxDurationMs),
});

const providerLaneSchema = z.object({
  concurrency: z.int().min(1).optional(),
  rate: rateSchema.optional(),
});

function isClock(value: unknown): value is Clock {
  if (typeof value !== 'object' || value === null) return false;
  const clock = value as Partial<Clock>;
  return [clock.now, clock.setTimeout, clock.clearTimeout].every((method) => typeof method === 'function');
}

const globalLaneOptionsSchema = z.object({
  concurrency: z.int().min(1).default(8),
  rate: rateSchema.optional(),
  perProvider: z
    .record(
      z.string().refine((name) => name !== sharedLaneName, {
        message: `"${sharedLaneName}" is the shared lane's name and cannot be a provider lane`,
      }),
      providerLaneSchema,
    )
    .optional(),
  warnAfterMs: z.number().min(0).max(maxDurationMs).default(2000),
  clock: z.custom<Clock>(isClock, {
    message: 'expected a Clock with now(), setTimeout() and clearTimeout()',
  }),
  onWaited: z
    .custom<(info: LaneWaitInfo) => void>((value) => typeof value === 'function', {
      message: 'expected a function',
    })
    .optional(),
});

interface Lane {
  readonly name: string;
  /** Caps how many tasks (runs) run at once. */
  readonly queue: PQueue;
  /** The request-rate limit, on the injected clock; undefined when the lane has none. */
  readonly gate: RateGate | undefined;
}

function parseOptions(options: GlobalLaneOptions): z.output<typeof globalLaneOptionsSchema> {
  const parsed = globalLaneOptionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.') || 'options';
    return `${field}: ${issue.message}`;
  });
  throw new RuntimeError('invalid_input', `invalid global lane options: ${problems.join('; ')}`, {
    cause: parsed.error,
    details: { issues: problems },
  });
}

/** A lane: p-queue for concurrency; its start rate on our own gate, since p-queue's interval uses host timers. */
function createLane(name: string, concurrency: number, rate: LaneRate | undefined, clock: Clock): Lane {
  return {
    name,
    queue: new PQueue({ concurrency }),
    gate: rate === undefined ? undefined : createRateGate(rate, clock),
  };
}

/** Waiting and running counts of a lane (runs; requests waiting for the rate are not counted here). */
function statsOf(lane: Lane): LaneStats {
  return { pending: lane.queue.size, running: lane.queue.pending };
}

/** Take a start of `lane`'s rate for one request (see `GlobalLane.pace`). */
function paceIn(
  lane: Lane,
  settings: RunSettings,
  options: { signal?: AbortSignal; onWaited?: (info: LaneWaitInfo) => void },
): Promise<void> | undefined {
  const { gate } = lane;
  if (gate === undefined || gate.tryTake()) return undefined;
  const enqueuedAt = settings.clock.now();
  const position = gate.waiting + 1;
  return gate.take(options.signal).then(() => {
    reportWait(settings, { lane, enqueuedAt, position }, options.onWaited ?? settings.onWaited);
  });
}

/**
 * Abort only while the task waits: once it runs, the task owns the signal itself. Handing the caller's signal
 * straight to p-queue would also reject a running task's promise on abort and free its slot while the task
 * still runs, breaking the concurrency cap.
 */
function whileWaiting(signal: AbortSignal): { signal: AbortSignal; started(): void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(abortReason(signal));
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    started: () => signal.removeEventListener('abort', onAbort),
  };
}

/** What every lane of one global lane shares when it runs a task. */
interface RunSettings {
  readonly clock: Clock;
  readonly warnAfterMs: number;
  readonly onWaited: ((info: LaneWaitInfo) => void) | undefined;
}

function reportWait(
  settings: RunSettings,
  waited: { lane: Lane; enqueuedAt: number; position: number },
  report: ((info: LaneWaitInfo) => void) | undefined,
): void {
  const waitedMs = settings.clock.now() - waited.enqueuedAt;
  if (report === undefined || waitedMs <= settings.warnAfterMs) return;
  try {
    report({ lane: waited.lane.name, waitedMs, position: waited.position });
  } catch {
    // An observer that throws must not fail the run it observes.
  }
}

/** Queue `task` in `lane`: it starts once it has a p-queue slot, and holds it until it settles. */
function runInLane<T>(
  lane: Lane,
  task: () => Promise<T>,
  options: LaneTaskOptions,
  settings: RunSettings,
): Promise<T> {
  const { signal } = options;
  const enqueuedAt = settings.clock.now();
  const position = lane.queue.size + 1;
  // Only a task that will wait needs its abort wired into p-queue (one controller and listener saved per
  // run on the hot path when the lane has room).
  const willWait = position > 1 || lane.queue.pending >= lane.queue.concurrency;
  const waiting = signal === undefined || !willWait ? undefined : whileWaiting(signal);
  const start = (): Promise<T> => {
    reportWait(settings, { lane, enqueuedAt, position }, options.onWaited ?? settings.onWaited);
    return task();
  };
  return lane.queue.add(
    () => {
      waiting?.started();
      return start();
    },
    { signal: waiting?.signal },
  );
}

/**
 * Create the global lane: a shared lane plus one per configured provider, each a p-queue for concurrency and a
 * rate gate on the injected clock. Throws `invalid_input` on bad options.
 */
export function createGlobalLane(options: GlobalLaneOptions): GlobalLane {
  const { concurrency, rate, perProvider, warnAfterMs, clock, onWaited } = parseOptions(options);
  const settings: RunSettings = { clock, warnAfterMs, onWaited };
  const shared = createLane(sharedLaneName, concurrency, rate, clock);
  const providerLanes = new Map<string, Lane>();
  for (const [name, lane] of Object.entries(perProvider ?? {})) {
    providerLanes.set(name, createLane(name, lane.concurrency ?? concurrency, lane.rate, clock));
  }
  let closing: Promise<void> | undefined;
  const laneOf = (provider: string | undefined): Lane =>
    (provider === undefined ? undefined : providerLanes.get(provider)) ?? shared;

  return {
    run<T>(task: () => Promise<T>, runOptions: LaneTaskOptions = {}): Promise<T> {
      if (closing !== undefined) {
        return Promise.reject(new RuntimeError('runtime_closed', 'the global lane is closed'));
      }
      const { provider, signal } = runOptions;
      if (signal?.aborted) return Promise.reject(abortReason(signal));
      return runInLane(laneOf(provider), task, runOptions, settings);
    },

    pace(provider, paceOptions = {}) {
      if (paceOptions.signal?.aborted) return Promise.reject(abortReason(paceOptions.signal));
      return paceIn(laneOf(provider), settings, paceOptions);
    },

    stats(): Record<string, LaneStats> {
      const stats: Record<string, LaneStats> = { [sharedLaneName]: statsOf(shared) };
      for (const lane of providerLanes.values()) stats[lane.name] = statsOf(lane);
      return stats;
    },

    close(): Promise<void> {
      const lanes = [shared, ...providerLanes.values()];
      closing ??= Promise.all(lanes.map((lane) => lane.queue.onIdle())).then(() => undefined);
      return closing;
    },

    get closed(): boolean {
      return closing !== undefined;
    },
  };
}
