export { createRuntime, type Runtime } from './create-runtime.js';
export type { Session, SessionStatus, WaitResult } from './session-handle.js';
export type { SessionQueue, QueueItem } from './session-queue-handle.js';
export type { SendResult } from './admit-message.js';
export type { SessionState } from './session-activity.js';
export type { EventStreamOptions } from './event-stream.js';
export type { InboundMessageInput } from './inbound-message.js';
export { runtimeOptionsSchema, type RuntimeOptions, type RuntimeConfig } from './runtime-options.js';
