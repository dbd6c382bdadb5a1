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
