import { approvalMemories, type ApprovalMemory } from '../core/index.js';
import { compileToolPatterns } from './tool-pattern.js';

export { approvalMemories, type ApprovalMemory };

/** What `needsApproval` looks at for one tool call. */
export interface ApprovalInput {
  readonly tool: string;
  readonly risk: 'low' | 'high';
  /** Configured tool names or globs that need approval whatever their risk. @default [] */
  readonly alwaysApprove?: readonly string[];
  /** Tool names approved with `remember`, by how long the approval lasts. */
  readonly remembered: Readonly<Record<ApprovalMemory, readonly string[]>>;
}

/**
 * True when the call must pause for an operator: high risk or listed in `alwaysApprove`, and not remembered.
 * Throws `invalid_input` for a malformed `alwaysApprove` pattern (groups are not supported there).
 */
export function needsApproval(input: ApprovalInput): boolean {
  const listed = compileToolPatterns(input.alwaysApprove ?? [])(input.tool);
  if (input.risk !== 'high' && !listed) return false;
  // Remembered entries are exact tool names, as recorded from an approval of one concrete call.
  return !approvalMemories.some((memory) => input.remembered[memory].includes(input.tool));
}
