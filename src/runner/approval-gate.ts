import type { Ledger } from '../ledger/ledger.js';
import { needsApproval } from '../policies/approval-rules.js';
import type { ApprovalGate } from './run-context.js';

const nothingRemembered = { run: [], session: [] } as const;

/**
 * The approval gate of one run: the pure rule (`risk: 'high'` or listed in `alwaysApprove`, unless remembered),
 * reading remembered approvals from the ledger only for calls that would need one.
 */
export function createApprovalGate(
  ledger: Ledger,
  sessionKey: string,
  runId: string,
  alwaysApprove: readonly string[],
): ApprovalGate {
  return {
    async needsApproval(tool) {
      const input = { tool: tool.name, risk: tool.risk, alwaysApprove };
      if (!needsApproval({ ...input, remembered: nothingRemembered })) return false;
      const remembered = await ledger.rememberedTools(sessionKey, runId);
      return needsApproval({ ...input, remembered });
    },
  };
}
