import { z } from 'zod';
import type { SubagentLane } from '../lanes/index.js';
import { spawnSubagentTool } from '../policies/index.js';
import { defineTool, type Tool } from '../tools/index.js';

/** What spawning a subagent takes: the spawning run and call, the task, and the run's abort signal. */
export interface SubagentSpawn {
  readonly parentKey: string;
  readonly parentRunId: string;
  readonly toolCallId: string;
  readonly task: string;
  readonly signal: AbortSignal;
}

/** The run and call that spawned a subagent's run. */
export interface SubagentParent {
  readonly parentRunId: string;
  readonly parentCallId: string;
}

/**
 * How runs reach subagents, implemented above `runner/` (the runtime starts the child session): the tool spawns
 * through it, and a child run records its parent through it.
 */
export interface SubagentPort {
  /** The lane children's runs take instead of the global lane. */
  readonly lane: SubagentLane;
  /** Start a child session with `task`; resolves with its run's final text, rejects with its error. */
  spawn(request: SubagentSpawn): Promise<string>;
  /** The run and call that spawned this session's run, when it is a subagent being run now. */
  parentOf(sessionKey: string): SubagentParent | undefined;
}

/** The built-in `spawn_subagent({ task })` tool over the port (read when called: it is wired after the tools). */
export function createSubagentTool(port: () => SubagentPort): Tool {
  return defineTool({
    name: spawnSubagentTool,
    description:
      'Hand a self-contained task to a subagent: it works on it in its own session, with narrowed tools, ' +
      'and its final answer is the result.',
    input: z.object({
      task: z.string().min(1).describe('What the subagent should do, with all it needs to know'),
    }),
    // Run again after a crash, the call attaches to the child session it started (the child's key comes from the
    // run and the call): its recorded answer, or its resumed run. It never starts a second child.
    idempotent: true,
    execute: ({ task }, context) =>
      port().spawn({
        parentKey: context.sessionKey,
        parentRunId: context.runId,
        toolCallId: context.toolCallId,
        task,
        signal: context.signal,
      }),
  });
}
