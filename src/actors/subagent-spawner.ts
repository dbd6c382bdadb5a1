import { createHash } from 'node:crypto';
import {
  abortReason,
  RuntimeError,
  type EventOf,
  runStatuses,
  type RunStatus,
  type LateBound,
} from '../core/index.js';
import type { SubagentLane } from '../lanes/index.js';
import { subagentDepth, subagentKey } from '../policies/index.js';
import type { SessionPort, SubagentParent, SubagentPort, SubagentSpawn } from '../runner/index.js';
import type { RuntimeInternals } from './runtime-internals.js';
import { runRoleOf } from './authority.js';
import type { InboundMessageInput } from './inbound-message.js';

type RunEnded = EventOf<'run.ended'>;

/** How a child's run ended: from its `run.ended`, or from its record when it ended before a crash. */
type ChildEnd = Pick<RunEnded, 'runId' | 'status' | 'text' | 'error'>;

/** What the spawner needs: the runtime's internals (wired later), the lane and the depth limit. */
export interface SubagentSpawnerDeps {
  readonly internals: LateBound<RuntimeInternals>;
  readonly lane: SubagentLane;
  readonly maxDepth: number;
  /** The parent session's port (its events go on the parent's numbering). */
  readonly portOf: (sessionKey: string) => SessionPort;
  /** The child session, as a bot would reach it: its task is sent as a message, a parent's stop aborts it. */
  readonly childOf: (sessionKey: string) => SubagentChild;
}

/** What the spawner does with a child session. */
export interface SubagentChild {
  send(input: InboundMessageInput): Promise<{ readonly disposition: string }>;
  abort(options: { readonly reason: string }): Promise<boolean>;
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
 * The child session of one `spawn_subagent` call: derived from the spawning run and call, so the call run again
 * after a crash (the parent run resumed) finds the child it started instead of starting a second one.
 */
export function childKeyOf(parentKey: string, parentRunId: string, toolCallId: string): string {
  const digest = createHash('sha256').update(`${parentRunId}\u0000${toolCallId}`).digest('hex');
  return subagentKey(parentKey, `sub_${digest.slice(0, 16)}`);
}

const isRunStatus = (status: string): status is RunStatus =>
  (runStatuses as readonly string[]).includes(status);

/**
 * The child's run as recorded: its end when it ran to its end (before a crash), 'open' while it is still to end
 * (resumed), undefined when the child never ran.
 */
async function recordedEnd(
  internals: RuntimeInternals,
  childKey: string,
): Promise<ChildEnd | 'open' | undefined> {
  const run = (await internals.services.ledger.listRuns(childKey)).at(-1);
  if (run === undefined) return undefined;
  if (run.endedAt === undefined || !isRunStatus(run.status)) return 'open';
  return {
    runId: run.runId,
    status: run.status,
    text: run.text,
    ...(run.error === undefined ? {} : { error: run.error }),
  };
}

/**
 * Send `task` to the child session and wait for the end of its run; the parent's abort aborts it. Listens before
 * anything else, so the child's `run.ended` cannot be missed. The same call run again after a crash attaches to
 * the child it started: its recorded end, or the end of its run (resumed) still open, never a second run.
 */
async function runChild(
  internals: RuntimeInternals,
  child: SubagentChild,
  spawn: SubagentSpawn,
  childKey: string,
  onSpawned: () => void,
): Promise<ChildEnd> {
  const ended: RunEnded[] = [];
  let wanted: ((event: RunEnded) => void) | undefined;
  // A child session holds this one call's task: any run of it that ends is the one waited for.
  const stop = internals.bus.subscribe((event) => {
    if (event.type !== 'run.ended' || event.runId === undefined) return;
    if (wanted !== undefined) wanted(event);
    else ended.push(event);
  }, childKey);
  const onAbort = (): void => {
    const reason = abortReason(spawn.signal);
    void child.abort({ reason: `the parent run stopped: ${reason.message}` }).catch(() => undefined);
  };
  try {
    const recorded = await recordedEnd(internals, childKey);
    if (recorded !== undefined && recorded !== 'open') return recorded;
    if (recorded === undefined) {
      onSpawned();
      const sent = await child.send({
        id: spawn.toolCallId,
        text: spawn.task,
        ...parentSender(internals, spawn),
      });
      // `duplicate`: the task was accepted before a crash and its run is still to come.
      if (sent.disposition !== 'started' && sent.disposition !== 'duplicate') {
        throw new RuntimeError('internal', `subagent ${childKey} did not start (${sent.disposition})`);
      }
    }
    spawn.signal.addEventListener('abort', onAbort, { once: true });
    if (spawn.signal.aborted) onAbort();
    return await new Promise<RunEnded>((resolve) => {
      const already = ended[0];
      if (already !== undefined) resolve(already);
      else wanted = resolve;
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
    const childKey = childKeyOf(parentKey, parentRunId, toolCallId);
    const port = deps.portOf(parentKey);
    const keys = { toolCallId, parentKey, childKey };
    parents.set(childKey, { parentRunId, parentCallId: toolCallId });
    const spawned = () => port.emit({ type: 'subagent.spawned', runId: parentRunId, ...keys, task });
    try {
      const ended = await runChild(
        deps.internals.get(),
        deps.childOf(childKey),
        request,
        childKey,
        spawned,
      ).catch((error: unknown) => {
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
