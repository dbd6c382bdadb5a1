export { isPlanStepMode, type ClusterWorkerOptions, type PlanStepMode } from './cluster-options.js';
export {
  clusterFace,
  openClusterWorker,
  startClusterWorker,
  withClusterLane,
  type ClusterWorker,
} from './runtime-worker.js';
