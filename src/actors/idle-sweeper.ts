import type { Clock, TimerHandle } from '../core/index.js';

/** Tracks when sessions went idle and reports those idle for `idleMs`, with one timer for all of them. */
export interface IdleSweeper {
  /** The session just went idle (nothing running, nothing queued). */
  markIdle(key: string): void;
  stop(): void;
}

/**
 * Create the sweeper. Sessions go idle in time order, so a FIFO of `[key, idleSince]` with one timer armed for
 * its head replaces a timer per session (none to schedule and cancel on every run). A session marked idle again
 * later makes its older entry stale; `onDue` re-checks that the session is still idle.
 */
export function createIdleSweeper(options: {
  clock: Clock;
  idleMs: number;
  onDue: (key: string) => void;
}): IdleSweeper {
  const { clock, idleMs, onDue } = options;
  const idleSince = new Map<string, number>();
  let queue: [string, number][] = [];
  let head = 0;
  let armed = false;
  let timer: TimerHandle;

  const arm = (): void => {
    const next = queue[head];
    if (next === undefined || armed) return;
    armed = true;
    timer = clock.setTimeout(sweep, Math.max(0, next[1] + idleMs - clock.now()));
  };

  function sweep(): void {
    armed = false;
    const now = clock.now();
    for (let entry = queue[head]; entry !== undefined && entry[1] + idleMs <= now; entry = queue[++head]) {
      const [key, at] = entry;
      if (idleSince.get(key) !== at) continue;
      idleSince.delete(key);
      onDue(key);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue = queue.slice(head);
      head = 0;
    }
    arm();
  }

  return {
    markIdle(key) {
      const at = clock.now();
      idleSince.set(key, at);
      queue.push([key, at]);
      arm();
    },
    stop() {
      if (armed) clock.clearTimeout(timer);
      armed = false;
      queue = [];
      head = 0;
      idleSince.clear();
    },
  };
}
