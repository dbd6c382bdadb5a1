import { sleepOn, type Clock } from './clock.js';
import { RuntimeError } from './errors.js';

/**
 * How many macrotask turns to yield between timers. One `setImmediate` turn already drains every
 * promise chain (microtasks queued by microtasks run in the same drain); the extra turns catch work
 * that hops through a macrotask before it schedules its next timer, such as a ledger's group commit
 * (flushed on the next event-loop turn) followed by code awaiting that write. Three covers that
 * hop twice over while keeping `advance` cheap when many timers fire.
 */
const settleRounds = 3;

/** The default cap on how many timers `runAll` fires before it decides the timers never stop. */
const defaultMaxTimers = 100_000;

/** Options of `fakeClock`. */
export interface FakeClockOptions {
  /**
   * The time the clock starts at, in milliseconds.
   * @default 0
   */
  readonly now?: number;
}

/** Options of `FakeClock.runAll`. */
export interface RunAllOptions {
  /**
   * How many timers may fire before `runAll` throws, to stop timers that keep rescheduling themselves.
   * @default 100_000
   */
  readonly maxTimers?: number;
}

/** A `Clock` whose time only moves when a test says so. */
export interface FakeClock extends Clock {
  /**
   * Move time forward by `ms`, firing due timers in time order (ties in scheduling order) and letting
   * promises settle before, between and after them. A callback that throws rejects the call.
   */
  advance(ms: number): Promise<void>;
  /**
   * Fire timers (and the timers they schedule) until none remain; time ends at the last one's due time. A timer
   * with an infinite delay never fires.
   */
  runAll(options?: RunAllOptions): Promise<void>;
  /** How many timers are scheduled and not yet fired or cleared. */
  pendingTimers(): number;
}

interface Timer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

/** Let promise chains and macrotask hops finish, with real event-loop turns (not sleeps). */
async function settle(): Promise<void> {
  for (let round = 0; round < settleRounds; round++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

function earlier(a: Timer, b: Timer): boolean {
  return a.due < b.due || (a.due === b.due && a.id < b.id);
}

/** A binary min-heap of timers by (due, id): O(log n) insert and removal of the earliest. */
class TimerHeap {
  items: Timer[] = [];

  push(timer: Timer): void {
    const items = this.items;
    let index = items.push(timer) - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!earlier(timer, items[parent] as Timer)) break;
      items[index] = items[parent] as Timer;
      index = parent;
    }
    items[index] = timer;
  }

  peek(): Timer | undefined {
    return this.items[0];
  }

  pop(): Timer | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top !== undefined && last !== undefined && items.length > 0) this.sinkFromTop(last);
    return top;
  }

  /** Rebuild from `timers` (used to drop cleared timers in bulk). */
  rebuild(timers: Iterable<Timer>): void {
    this.items = [];
    for (const timer of timers) this.push(timer);
  }

  private sinkFromTop(timer: Timer): void {
    const items = this.items;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length && earlier(items[right] as Timer, items[left] as Timer) ? right : left;
      if (!earlier(items[child] as Timer, timer)) break;
      items[index] = items[child] as Timer;
      index = child;
    }
    items[index] = timer;
  }
}

/** The state of a fake clock: its time, its timers and the queue that runs `advance`/`runAll` calls in turn. */
class FakeTimers {
  current: number;
  private nextId = 1;
  // Cleared timers stay in the heap (lazy deletion) and are skipped; `active` is the truth.
  private readonly heap = new TimerHeap();
  readonly active = new Map<number, Timer>();
  private queue: Promise<void> = Promise.resolve();

  constructor(now: number) {
    this.current = now;
  }

  set(callback: () => void, ms: number): number {
    const delay = Number.isNaN(ms) || ms < 0 ? 0 : ms;
    const timer: Timer = { id: this.nextId++, due: this.current + delay, callback };
    this.active.set(timer.id, timer);
    this.heap.push(timer);
    return timer.id;
  }

  clear(handle: unknown): void {
    if (typeof handle !== 'number' || !this.active.delete(handle)) return;
    const size = this.heap.items.length;
    if (size > 64 && size > this.active.size * 2) this.heap.rebuild(this.active.values());
  }

  advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms) || ms < 0) {
      return Promise.reject(new RuntimeError('invalid_input', `advance needs ms >= 0, got ${ms}`));
    }
    return this.serialize(async () => {
      const until = this.current + ms;
      await this.fireDue(until, Number.POSITIVE_INFINITY);
      this.current = Math.max(this.current, until);
      await settle();
    });
  }

  runAll(maxTimers: number): Promise<void> {
    return this.serialize(() => this.fireDue(undefined, maxTimers));
  }

  /** The earliest timer still scheduled, dropping cleared ones from the top of the heap. */
  private nextTimer(): Timer | undefined {
    for (let top = this.heap.peek(); top !== undefined; top = this.heap.peek()) {
      if (this.active.has(top.id)) return top;
      this.heap.pop();
    }
    return undefined;
  }

  private fire(timer: Timer): void {
    this.heap.pop();
    this.active.delete(timer.id);
    this.current = Math.max(this.current, timer.due);
    timer.callback();
  }

  /** Fire timers due at or before `until` (all when undefined), settling promises before and after each. */
  private async fireDue(until: number | undefined, maxTimers: number): Promise<void> {
    let fired = 0;
    await settle();
    for (let timer = this.nextTimer(); timer !== undefined; timer = this.nextTimer()) {
      // An infinite delay never fires, as on the system clock.
      if ((until !== undefined && timer.due > until) || timer.due === Number.POSITIVE_INFINITY) break;
      if (fired++ >= maxTimers) {
        throw new RuntimeError('internal', `fakeClock.runAll: more than ${maxTimers} timers fired`);
      }
      this.fire(timer);
      await settle();
    }
  }

  // Calls run one after another so two un-awaited `advance` calls do not interleave their timers.
  private serialize(work: () => Promise<void>): Promise<void> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** Create a fake clock starting at `options.now` (default 0); its handles are numbers. */
export function fakeClock(options: FakeClockOptions = {}): FakeClock {
  const timers = new FakeTimers(options.now ?? 0);
  const setTimer = (callback: () => void, ms: number): number => timers.set(callback, ms);
  const clearTimer = (handle: unknown): void => timers.clear(handle);
  return {
    now: () => timers.current,
    setTimeout: setTimer,
    clearTimeout: clearTimer,
    sleep: sleepOn({ setTimeout: setTimer, clearTimeout: clearTimer }),
    advance: (ms) => timers.advance(ms),
    runAll: (runOptions = {}) => timers.runAll(runOptions.maxTimers ?? defaultMaxTimers),
    pendingTimers: () => timers.active.size,
  };
}
