/**
 * `agentlanes/queue`: the queue's vocabulary (docs/semantics.md): its modes and drop policies, the default
 * settings, what `send()` answers (`dispositions`) and why a message is dropped. `QueueMode` and
 * `QueueSettingsInput` are on the root entry.
 */
export {
  queueModes,
  dropPolicies,
  defaultQueueSettings,
  type DropPolicy,
  type QueueSettings,
} from '../policies/index.js';
export { dispositions, type Disposition, dropReasons, type DropReason } from '../core/index.js';
