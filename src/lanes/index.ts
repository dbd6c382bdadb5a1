export { createSessionLane } from './session-lane.js';
export type { SessionLane } from './session-lane.js';
export { createGlobalLane } from './global-lane.js';
export { createSubagentLane, type SubagentLane } from './subagent-lane.js';
export type {
  GlobalLane,
  GlobalLaneOptions,
  LaneRate,
  LaneStats,
  LaneTaskOptions,
  LaneWaitInfo,
  ProviderLaneOptions,
} from './global-lane.js';
