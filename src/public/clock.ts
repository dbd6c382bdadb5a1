/**
 * `agentlanes/clock`: the sources of time, ids and randomness a runtime takes (`RuntimeOptions`' `clock`, `ids`
 * and `random`): the system's, and deterministic ones for tests and replays. `fakeClock` is in
 * `agentlanes/testing`.
 */
export {
  systemClock,
  type Clock,
  type TimerHandle,
  randomIds,
  sequentialIds,
  seededRandom,
  type IdGenerator,
  type Random,
} from '../core/index.js';
