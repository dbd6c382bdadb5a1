import type { EventType, RuntimeEvent } from './events.js';

/** The events whose type is one of `T`. */
export type EventIn<T extends EventType> = Extract<RuntimeEvent, { type: T }>;

/**
 * A type guard accepting the events whose type is one of `types`: what a consumer that handles only a few types
 * uses before an exhaustive `switch` over those types.
 */
export function eventGuard<const T extends EventType>(
  types: readonly T[],
): (event: RuntimeEvent) => event is EventIn<T> {
  const accepted = new Set<EventType>(types);
  return (event): event is EventIn<T> => accepted.has(event.type);
}
