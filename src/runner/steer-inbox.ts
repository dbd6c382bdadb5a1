import type { StoredPart } from '../core/index.js';

/** A user message steered into a running run, waiting for the next boundary. */
export interface SteerMessage {
  readonly messageId: string;
  readonly text: string;
  /** Its content parts (references into the workspace). */
  readonly parts?: readonly StoredPart[];
}

/** The run's inbox of steer messages: filled by the session actor, drained by the turn loop at boundaries. */
export interface SteerInbox {
  push(message: SteerMessage): void;
  /** Take every pending steer message, in arrival order. */
  take(): SteerMessage[];
  readonly pending: number;
}

/** Create an empty steer inbox. */
export function createSteerInbox(): SteerInbox {
  let queue: SteerMessage[] = [];
  return {
    push(message) {
      queue.push(message);
    },
    take() {
      const taken = queue;
      queue = [];
      return taken;
    },
    get pending() {
      return queue.length;
    },
  };
}
