export { runTurnLoop } from './turn-loop.js';
export { createSteerInbox, type SteerInbox, type SteerMessage } from './steer-inbox.js';
export { runAbortReason, abortStatusOf, type AbortStatus } from './run-abort.js';
export { skippedToolContent } from './tool-call.js';
export {
  runPhases,
  type RunPhase,
  type RunLimits,
  type RunContext,
  type RunOutcome,
  type TurnDraft,
} from './run-context.js';
