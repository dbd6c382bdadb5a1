/** Every queue mode a message can ask for; `queue` is an alias of `followup`. */
export const queueModes = [
  'steer',
  'followup',
  'queue',
  'collect',
  'steer-backlog',
  'interrupt',
  'reject',
] as const;

/** What happens to a message that arrives while its session is busy. */
export type QueueMode = (typeof queueModes)[number];
