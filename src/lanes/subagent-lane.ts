import PQueue from 'p-queue';
import { RuntimeError } from '../core/index.js';
import type { LaneStats } from './global-lane.js';

/**
 * The lane subagents' runs take instead of the global lane: its own concurrency, so children cannot starve chats,
 * and a parent that holds a global slot while it waits for its child never waits on a slot it holds itself. It has
 * no start rate: the global lane's rate limits run starts, and a child's run is part of its parent's, which took
 * one; its model calls go through failover and profile cooldowns like any run's.
 */
export interface SubagentLane {
  /** Run `task` when the lane has room. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Tasks waiting and running. */
  stats(): LaneStats;
  /** Stop intake (new tasks reject with `runtime_closed`); resolves once the tasks already queued are done. */
  close(): Promise<void>;
}

/** Create the subagent lane with `concurrency` runs at once. */
export function createSubagentLane(options: { readonly concurrency: number }): SubagentLane {
  const queue = new PQueue({ concurrency: options.concurrency });
  let closed = false;
  return {
    run(task) {
      if (closed) return Promise.reject(new RuntimeError('runtime_closed', 'the subagent lane is closed'));
      return queue.add(task);
    },
    stats: () => ({ pending: queue.size, running: queue.pending }),
    close() {
      closed = true;
      return queue.onIdle();
    },
  };
}
