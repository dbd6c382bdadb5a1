import { needsApproval } from '../policies/index.js';
import { describeInvalidArgs } from '../tools/index.js';
import type { ToolRegistry } from '../tools/index.js';
import type { PlanGraph } from './plan-graph.js';
import type { Plan } from './plan-schema.js';
import { findReferences } from './placeholders.js';
import type { StepResult } from './step-result.js';

/** What a preview says about one step: its tool, args as far as they resolve, and whether it would pause. */
export interface StepPreview {
  readonly tool: string;
  readonly args: Readonly<Record<string, unknown>>;
  /** False when the args refer to results of earlier steps (known only once they ran). */
  readonly resolved: boolean;
  /** The steps this one waits for. */
  readonly dependsOn: readonly string[];
  /** Whether the step would pause for approval in `auto` mode. */
  readonly needsApproval: boolean;
}

/**
 * Preview a plan without executing anything: every step's tool is checked (known, allowed, executable), args
 * without placeholders are validated strictly against the tool's schema, and args with placeholders are shown as
 * they are, waiting for the steps they name. Results are in plan order; `data` is a `StepPreview`.
 */
export function previewPlan(
  plan: Plan,
  graph: PlanGraph,
  tools: ToolRegistry,
  alwaysApprove: readonly string[],
  now: number,
): StepResult[] {
  const metadata = { executionTime: 0, retries: 0, startedAt: now };
  return plan.steps.map((step): StepResult => {
    const fail = (code: 'tool_denied' | 'not_found' | 'tool_failed' | 'args_invalid', message: string) => ({
      stepId: step.id,
      success: false,
      error: { code, message },
      metadata,
    });
    if (tools.isDenied(step.tool)) return fail('tool_denied', `the tool "${step.tool}" is not allowed here`);
    const tool = tools.get(step.tool);
    if (tool === undefined) return fail('not_found', `unknown tool "${step.tool}"`);
    if (tool.execute === undefined) return fail('tool_failed', `"${step.tool}" is a deferred tool`);
    const resolved = findReferences(step.args, plan).length === 0;
    if (resolved) {
      const parsed = tool.input.safeParse(step.args);
      if (!parsed.success) return fail('args_invalid', describeInvalidArgs(step.tool, parsed.error));
    }
    const remembered = { run: [], session: [] };
    const data: StepPreview = {
      tool: step.tool,
      args: step.args,
      resolved,
      dependsOn: graph.dependencies(step.id),
      needsApproval: needsApproval({ tool: tool.name, risk: tool.risk, alwaysApprove, remembered }),
    };
    return { stepId: step.id, success: true, data, metadata };
  });
}
