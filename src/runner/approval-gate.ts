import { needsApproval } from '../policies/index.js';
import type { Tool } from '../tools/index.js';
import type { RunContext } from './run-context.js';

const nothingRemembered = { run: [], session: [] } as const;

/**
 * Whether a run's call of `tool` must wait for an operator: the pure rule (`risk: 'high'` or listed in
 * `alwaysApprove`, unless remembered), reading remembered approvals from the ledger only for calls that would
 * need one.
 */
export async function toolNeedsApproval(context: RunContext, tool: Tool): Promise<boolean> {
  const { ledger, alwaysApprove } = context.services;
  const input = { tool: tool.name, risk: tool.risk, alwaysApprove };
  if (!needsApproval({ ...input, remembered: nothingRemembered })) return false;
  const remembered = await ledger.rememberedTools(context.sessionKey, context.runId);
  return needsApproval({ ...input, remembered });
}
