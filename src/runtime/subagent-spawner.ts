import { abortReason } from '../core/clock.js';
import { RuntimeError } from '../core/errors.js';
import type { EventOf } from '../core/events.js';
import type { IdGenerator } from '../core/ids.js';
import type { SubagentLane } from '../lanes/subagent-lane.js';
import { subagentDepth, subagentKey } from '../policies/subagent-policy.js';
import type { SessionPort } from '../runner/session-port.js';
import type { SubagentParent, SubagentPort, SubagentSpawn } from '../runner/subagent-port.js';
import type { LateBound } from './late-bound.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { runRoleOf } from './run-authority.js';
import { createSessionHandle } from './session-handle.js';

type RunEnded = EventOf<'run.ended'>;

/** What the spawner needs: the runtime's internals (wired later), its ids, the lane and the depth limit. */
export interface SubagentSpawnerDeps {
  readonly internals: LateBound<RuntimeInternals>;
  readonly ids: IdGenerator;
  readonly lane: SubagentLane;
  readonly maxDepth: number;
  /** The parent session's port (its events go on the parent's numbering). */
  readonly portOf: (sessionKey: string) => SessionPort;
}

/**
 * The sender of a child's task: the parent run, with the role it runs with, so the child has no more authority than
 * its parent (nothing when no message of the parent run named a role).
 */
function parentSender(internals: RuntimeInternals, spawn: SubagentSpawn) {
  const run = internals.registry.live(spawn.parentKey)?.actor.getSnapshot().context.run;
  const { authority } = internals.admission;
  const role = run === null || run === undefined ? undefined : runRoleOf(authority, run);
  return role === undefined ? {} : { sender: { id: spawn.parentRunId, role } };
}

/**
 * Send `task` to the child session and wait for the end of the run it started; the parent's abort aborts it.
 * Listens before sending, so the child's `run.ended` cannot be missed.
 */
async function runChild(
  internals: RuntimeInternals,
  spawn: SubagentSpawn,
  childKey: string,
): Promise<RunEnded> {
  const ended = new Map<string, RunEnded>();
  let wanted: { runId: string; resolve: (event: RunEnded) => void } | undefined;
  const stop = internals.bus.subscribe((event) => {
    if (event.type !== 'run.ended' || event.runId === undefined) return;
    if (wanted?.runId === event.runId) wanted.resolve(event);
    else ended.set(event.runId, event);
  }, childKey);
  const child = createSessionHandle(internals, childKey);
  const onAbort = (): void => {
    const reason = abortReason(spawn.signal);
    void child.abort({ reason: `the parent run stopped: ${reason.message}` }).catch(() => undefined);
  };
  try {
    const sent = await child.send({
      id: spawn.toolCallId,
      text: spawn.task,
      ...parentSender(internals, spawn),
    });
    const runId = sent.runId;
    if (sent.disposition !== 'started' || runId === undefined) {
      throw new RuntimeError('internal', `subagent ${childKey} did not start (${sent.disposition})`);
    }
    spawn.signal.addEventListener('abort', onAbort, { once: true });
    if (spawn.signal.aborted) onAbort();
    return await new Promise<RunEnded>((resolve) => {
      const already = ended.get(runId);
      if (already !== undefined) resolve(already);
      else wanted = { runId, resolve };
    });
  } finally {
    spawn.signal.removeEventListener('abort', onAbort);
    stop();
  }
}

/**
 * The runtime's side of `spawn_subagent`: a child session `<parent>/sub:<id>` gets the task as its message and runs
 * in the subagent lane (its tools narrowed by the subagent layers); `subagent.spawned` and `subagent.ended` go on the
 * parent session under the spawning run. Resolves with the child's final text; any other end rejects with its error.
 */
export function createSubagentSpawner(deps: SubagentSpawnerDeps): SubagentPort {
  const parents = new Map<string, SubagentParent>();
  const spawn = async (request: SubagentSpawn): Promise<string> => {
    const { parentKey, parentRunId, toolCallId, task, signal } = request;
    if (subagentDepth(parentKey) >= deps.maxDepth) {
      throw new RuntimeError(
        'tool_denied',
        `spawn_subagent: ${parentKey} may not spawn (maxDepth ${deps.maxDepth})`,
      );
    }
    if (signal.aborted) throw abortReason(signal);
    const childKey = subagentKey(parentKey, deps.ids('sub'));
    const port = deps.portOf(parentKey);
    const keys = { toolCallId, parentKey, childKey };
    parents.set(childKey, { parentRunId, parentCallId: toolCallId });
    port.emit({ type: 'subagent.spawned', runId: parentRunId, ...keys, task });
    try {
      const ended = await runChild(deps.internals.get(), request, childKey).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        port.emit({
          type: 'subagent.ended',
          runId: parentRunId,
          ...keys,
          status: 'failed',
          error: { code: 'internal', message },
        });
        throw error;
      });
      const error = ended.error === undefined ? {} : { error: ended.error };
      const childRunId = ended.runId === undefined ? {} : { childRunId: ended.runId };
      port.emit({
        type: 'subagent.ended',
        runId: parentRunId,
        ...keys,
        ...childRunId,
        status: ended.status,
        ...error,
      });
      if (ended.status === 'completed') return ended.text;
      const why = ended.error === undefined ? '' : `: ${ended.error.message}`;
      throw new RuntimeError(
        ended.error?.code ?? 'tool_failed',
        `subagent ${childKey} ${ended.status}${why}`,
      );
    } finally {
      parents.delete(childKey);
    }
  };
  return { lane: deps.lane, spawn, parentOf: (sessionKey) => parents.get(sessionKey) };
}
