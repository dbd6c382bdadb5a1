export type { ClaimAcross, ConsumerHold } from './consumer-across.js';
export { createCorruptRowReporter } from './corrupt-rows.js';
export { createEventBus, type EventBus, type EventListener } from './event-bus.js';
export { eventStreamStarted } from './event-stream-start.js';
export { streamEvents, type EventSource, type EventStreamOptions } from './event-stream.js';
export { runtimeStreamsOf } from './runtime-streams.js';
