import PQueue from 'p-queue';
import { z } from 'zod';
import { abortReason, maxDurationMs } from '../core/clock.js';
import type { Clock } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';

/** At most `limit` task starts per `intervalMs`. */
export interface LaneRate {
  limit: number;
  intervalMs: number;
}

/** A provider's own lane, separate from the shared one. */
export interface ProviderLaneOptions {
  /** Tasks running at once in this provider's lane. @default the shared lane's `concurrency` */
  concurrency?: number | undefined;
  /** Start-rate limit of this provider's lane. @default no limit */
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
  /** Start-rate limit of the shared lane. @default no limit */
  rate?: LaneRate | undefined;
  /** Providers that get their own lane instead of the shared one. @default none */
  perProvider?: Record<string, ProviderLaneOptions> | undefined;
  /** A task that waited longer than this before starting is reported to `onWaited`. @default 2000 */
  warnAfterMs?: number | undefined;
  /** Measures how long tasks wait. */
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

/** Caps concurrent model work and its start rate, shared or per provider. */
export interface GlobalLane {
  /** Run `task` when the lane (the provider's own lane if configured, else the shared one) has room. */
  run<T>(task: () => Promise<T>, options?: LaneTaskOptions): Promise<T>;
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
  clock: z.custom<Clock>(
    (value) =>
      typeof value === 'object' && value !== null && typeof (value as Partial<Clock>).now === 'function',
    { message: 'expected a Clock with a now() method' },
  ),
  onWaited: z
    .custom<(info: LaneWaitInfo) => void>((value) => typeof value === 'function', {
      message: 'expected a function',
    })
    .optional(),
});

interface Lane {
  readonly name: string;
  readonly queue: PQueue;
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

function createLane(name: string, concurrency: number, rate: LaneRate | undefined): Lane {
  // p-queue's rate limiting runs on the host timers (setTimeout/setInterval/Date.now); it cannot take our
  // Clock, so only the wait measurement below follows the injected clock. Tests of the rate use fake timers.
  const queue =
    rate === undefined
      ? new PQueue({ concurrency })
      : new PQueue({ concurrency, intervalCap: rate.limit, interval: rate.intervalMs });
  return { name, queue };
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

/** Create the global lane: a shared p-queue plus one per configured provider. Throws `invalid_input` on bad options. */
export function createGlobalLane(options: GlobalLaneOptions): GlobalLane {
  const { concurrency, rate, perProvider, warnAfterMs, clock, onWaited } = parseOptions(options);
  const shared = createLane(sharedLaneName, concurrency, rate);
  const providerLanes = new Map<string, Lane>();
  for (const [name, lane] of Object.entries(perProvider ?? {})) {
    providerLanes.set(name, createLane(name, lane.concurrency ?? concurrency, lane.rate));
  }
  let closing: Promise<void> | undefined;

  function reportWait(
    lane: Lane,
    enqueuedAt: number,
    position: number,
    report: ((info: LaneWaitInfo) => void) | undefined,
  ): void {
    const waitedMs = clock.now() - enqueuedAt;
    if (report === undefined || waitedMs <= warnAfterMs) return;
    try {
      report({ lane: lane.name, waitedMs, position });
    } catch {
      // An observer that throws must not fail the run it observes.
    }
  }

  return {
    run<T>(task: () => Promise<T>, runOptions: LaneTaskOptions = {}): Promise<T> {
      if (closing !== undefined) {
        return Promise.reject(new RuntimeError('runtime_closed', 'the global lane is closed'));
      }
      const { provider, signal } = runOptions;
      if (signal?.aborted) return Promise.reject(abortReason(signal));
      const lane = (provider === undefined ? undefined : providerLanes.get(provider)) ?? shared;
      const enqueuedAt = clock.now();
      const position = lane.queue.size + 1;
      // Only a task that will wait needs its abort wired into p-queue (one controller and listener saved per
      // run on the hot path when the lane has room).
      const willWait = position > 1 || lane.queue.pending >= lane.queue.concurrency;
      const waiting = signal === undefined || !willWait ? undefined : whileWaiting(signal);
      return lane.queue.add(
        () => {
          waiting?.started();
          reportWait(lane, enqueuedAt, position, runOptions.onWaited ?? onWaited);
          return task();
        },
        { signal: waiting?.signal },
      );
    },

    stats(): Record<string, LaneStats> {
      const stats: Record<string, LaneStats> = {
        [sharedLaneName]: { pending: shared.queue.size, running: shared.queue.pending },
      };
      for (const lane of providerLanes.values()) {
        stats[lane.name] = { pending: lane.queue.size, running: lane.queue.pending };
      }
      return stats;
    },

    close(): Promise<void> {
      closing ??= Promise.all([shared, ...providerLanes.values()].map((lane) => lane.queue.onIdle())).then(
        () => undefined,
      );
      return closing;
    },

    get closed(): boolean {
      return closing !== undefined;
    },
  };
}
