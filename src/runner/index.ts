export { runTurnLoop } from './turn-loop.js';
export { createSteerInbox, type SteerInbox, type SteerMessage } from './run-request.js';
export { runAbortReason, abortStatusOf, type AbortStatus } from './execute-run.js';
export { skippedToolContent } from './tool-call.js';
export {
  runPhases,
  type RunPhase,
  type RunLimits,
  type RunContext,
  type RunOutcome,
  type TurnDraft,
} from './run-context.js';
export type { ProfileStats } from './auth-profiles.js';
export {
  createAuthProfiles,
  type AuthProfileConfig,
  type AuthProfiles,
  type SecretSource,
} from './auth-profiles.js';
export { summarizeOlderTurns, type CompactionInput, type Compactor } from './compaction.js';
export {
  closeCrashedRuns,
  defaultRecoveryPolicy,
  recoverOpenRuns,
  type RecoveryPolicy,
} from './crash-resume.js';
export type { AuthProfilePool, ModelCandidate } from './model-call.js';
export { answerApproval, answerSupplied } from './run-pause.js';
export { resumeCrashedPlan } from './plan-resume.js';
export { endHeldPlan, endPausedPlan, type PlanEnding } from './plan-run.js';
export { resumePlanRun } from './plan-resume.js';
export { assertPlanStepIds, type PlanRunResult } from './plan-run.js';
export { startPlanRun } from './plan-run.js';
export { createRunExecutor } from './execute-run.js';
export { runKinds, type ExecuteRun, type RunKind, type RunRequest } from './run-request.js';
export { workEnded, type RunJob, type RunJobs } from './run-request.js';
export type {
  LaneServices,
  LedgerGuard,
  ModelServices,
  RecordServices,
  RunBasics,
  RunLease,
  RunServices,
  ToolServices,
} from './run-services.js';
export {
  isRunPaused,
  isRunEnding,
  isRunPausing,
  type ExecutedRun,
  type RunEnding,
  type RunPausing,
  type PausedCallInfo,
  type RunPaused,
  type RunResult,
  type RunSummary,
} from './run-request.js';
export { createRunWork, type RunWork } from './run-work.js';
export type { SessionControl, WaitingCall, PlanStepWait } from './session-scope.js';
export type { RunPort, SessionPort } from './run-request.js';
export type { SessionScope } from './session-scope.js';
export {
  createSubagentTool,
  type SubagentParent,
  type SubagentPort,
  type SubagentSpawn,
} from './subagent-port.js';
export { serialize } from './tool-call.js';
export { finishRunWork, startUndo, type UndoOptions, type UndoResult, type UndoStep } from './undo-run.js';
