/** A message accepted and not yet in a run: when it arrived, how, and (when content is recorded) its text. */
export interface ReceivedMessage {
  readonly messageId: string;
  readonly at: number;
  readonly disposition: string;
  readonly text: string | undefined;
  /** The sender's W3C trace context, when it passed one. */
  readonly traceparent: string | undefined;
}

/** The most messages remembered between acceptance and their run's start (the oldest go first past it). */
const receivedLimit = 10_000;

/**
 * Messages accepted and waiting for their run's start, by session: what a run span needs of the messages it
 * answers (their wait, their text). A message that never runs (cancelled, dropped) is forgotten past the limit.
 */
export class ReceivedMessages {
  private readonly messages = new Map<string, ReceivedMessage>();

  add(sessionKey: string, message: ReceivedMessage): void {
    if (this.messages.size >= receivedLimit) {
      const oldest = this.messages.keys().next().value;
      if (oldest !== undefined) this.messages.delete(oldest);
    }
    this.messages.set(keyOf(sessionKey, message.messageId), message);
  }

  /** The messages a run starts with that were seen accepted, in the run's order; forgotten from now on. */
  take(sessionKey: string, messageIds: readonly string[]): ReceivedMessage[] {
    const taken: ReceivedMessage[] = [];
    for (const messageId of messageIds) {
      const key = keyOf(sessionKey, messageId);
      const message = this.messages.get(key);
      if (message === undefined) continue;
      this.messages.delete(key);
      taken.push(message);
    }
    return taken;
  }
}

function keyOf(sessionKey: string, messageId: string): string {
  return `${sessionKey}\u0000${messageId}`;
}
