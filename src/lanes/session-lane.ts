import { RuntimeError } from '../core/index.js';

/** Per-key FIFO lanes: at most one task per key at a time, keys independent of each other. */
export interface SessionLane {
  /** Run `task` after every earlier task of `key`; resolves/rejects with the task's own result. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Reject the pending (not yet started) tasks of `key` with RuntimeError('cancelled'); the active one runs on. Returns how many were rejected. */
  clear(key: string): number;
  /** How many tasks of `key` are active or pending. */
  size(key: string): number;
  /** How many keys currently hold any task (idle keys are freed). */
  readonly activeKeys: number;
}

/** A task waiting behind the active one, linked to the next waiting task. */
interface PendingTask {
  readonly task: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
  next: PendingTask | undefined;
}

/**
 * One busy key. A record exists only while the key has an active task, and is deleted the moment the key
 * goes idle, so a million sessions that each ran once cost nothing afterwards.
 */
interface KeyLane {
  /** The queued task now running, or undefined when the running task came in on an idle key (its caller holds the task's own promise). */
  current: PendingTask | undefined;
  head: PendingTask | undefined;
  tail: PendingTask | undefined;
  pendingCount: number;
  /** Settlement handlers of the running task, made once per record rather than once per task. */
  readonly onFulfilled: (value: unknown) => void;
  readonly onRejected: (reason: unknown) => void;
}

type Lanes = Map<string, KeyLane>;

function createKeyLane(lanes: Lanes, key: string): KeyLane {
  const lane: KeyLane = {
    current: undefined,
    head: undefined,
    tail: undefined,
    pendingCount: 0,
    onFulfilled: (value) => {
      const finished = lane.current;
      startNext(lanes, key, lane);
      finished?.resolve(value);
    },
    onRejected: (reason) => {
      const finished = lane.current;
      startNext(lanes, key, lane);
      finished?.reject(reason);
    },
  };
  return lane;
}

/** Start the oldest pending task of `key`, skipping over tasks that throw synchronously; free the key when none is left. */
function startNext(lanes: Lanes, key: string, lane: KeyLane): void {
  for (;;) {
    const next = lane.head;
    if (next === undefined) {
      lane.current = undefined;
      lanes.delete(key);
      return;
    }
    lane.head = next.next;
    if (lane.head === undefined) lane.tail = undefined;
    next.next = undefined;
    lane.pendingCount -= 1;
    lane.current = next;
    let promise: Promise<unknown>;
    try {
      promise = Promise.resolve(next.task());
    } catch (error) {
      next.reject(error);
      continue;
    }
    promise.then(lane.onFulfilled, lane.onRejected);
    return;
  }
}

function runOnIdleKey<T>(lanes: Lanes, key: string, task: () => Promise<T>): Promise<T> {
  const lane = createKeyLane(lanes, key);
  // Registered before calling task(), so a task that re-enters run(key) queues behind itself.
  lanes.set(key, lane);
  let promise: Promise<T>;
  try {
    promise = Promise.resolve(task());
  } catch (error) {
    startNext(lanes, key, lane);
    // The caller gets the task's own error, whatever it threw.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return Promise.reject(error);
  }
  // Attached before the caller can attach its own handlers, so the key is already released (or the next
  // task started) by the time the caller's `await` resumes.
  promise.then(lane.onFulfilled, lane.onRejected);
  return promise;
}

function enqueue<T>(lane: KeyLane, task: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const pending: PendingTask = {
      task,
      resolve: resolve as (value: unknown) => void,
      reject,
      next: undefined,
    };
    if (lane.tail === undefined) lane.head = pending;
    else lane.tail.next = pending;
    lane.tail = pending;
    lane.pendingCount += 1;
  });
}

/** Reject every pending task of `lane` with `cancelled`; returns how many there were. */
function clearPending(key: string, lane: KeyLane): number {
  let pending = lane.head;
  const count = lane.pendingCount;
  lane.head = undefined;
  lane.tail = undefined;
  lane.pendingCount = 0;
  while (pending !== undefined) {
    const next = pending.next;
    pending.next = undefined;
    pending.reject(
      new RuntimeError('cancelled', `queued task of "${key}" was cleared`, {
        details: { key },
      }),
    );
    pending = next;
  }
  return count;
}

/**
 * Create a session lane. On an idle key `run()` calls `task()` synchronously and returns the task's own
 * promise; behind a busy key the task starts from a microtask once everything ahead of it has settled.
 */
export function createSessionLane(): SessionLane {
  const lanes: Lanes = new Map();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const lane = lanes.get(key);
      return lane === undefined ? runOnIdleKey(lanes, key, task) : enqueue(lane, task);
    },

    clear(key: string): number {
      const lane = lanes.get(key);
      return lane === undefined ? 0 : clearPending(key, lane);
    },

    size(key: string): number {
      const lane = lanes.get(key);
      return lane === undefined ? 0 : lane.pendingCount + 1;
    },

    get activeKeys(): number {
      return lanes.size;
    },
  };
}
