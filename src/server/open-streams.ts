/** Why the server ended an event stream. */
export type StreamEnd = 'shutdown' | 'slow_client';

/** One open stream as the server tracks it. */
export interface OpenStream {
  /** End the stream from the server's side (a final frame on shutdown; a cut for a slow client). */
  end(reason: StreamEnd): void;
}

/** The streams a server has open: what `close()` ends, and what `/metrics` counts. */
export interface OpenStreams {
  /** Track a stream; the function forgets it again. */
  add(stream: OpenStream): () => void;
  /** End every open stream with `reason`. */
  endAll(reason: StreamEnd): void;
  /** Streams open now. */
  readonly size: number;
  /** Streams opened since start. */
  readonly opened: number;
  /** Streams cut because their client fell behind, since start. */
  readonly slowClients: number;
  /** Count a stream cut for a slow client. */
  countSlowClient(): void;
}

/** Create the registry of open streams. */
export function createOpenStreams(): OpenStreams {
  const streams = new Set<OpenStream>();
  let opened = 0;
  let slowClients = 0;
  return {
    add(stream) {
      streams.add(stream);
      opened += 1;
      return () => streams.delete(stream);
    },
    endAll(reason) {
      for (const stream of [...streams]) stream.end(reason);
    },
    get size() {
      return streams.size;
    },
    get opened() {
      return opened;
    },
    get slowClients() {
      return slowClients;
    },
    countSlowClient() {
      slowClients += 1;
    },
  };
}
