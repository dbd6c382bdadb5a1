import type { SSEStreamingApi } from 'hono/streaming';
import type { Clock, TimerHandle } from '../core/index.js';
import type { StreamEnd } from './open-streams.js';

/** How a stream's writer paces its client. */
export interface FrameWriterOptions {
  readonly clock: Clock;
  /** A comment line this often, so proxies and clients see the stream is alive. */
  readonly heartbeatMs: number;
  /**
   * Bytes this process holds for the client, at most, before `write` waits: frames the stream has not handed on,
   * and what the connection still buffers (`FrameWriterHooks.backlog`).
   */
  readonly clientBufferBytes: number;
  /** How long a client may stay above the buffer before it is cut (0: at once). */
  readonly slowClientMs: number;
  /** The frame sent when the server ends the stream on shutdown. @default closeFrame('shutdown') */
  readonly shutdownFrame?: string;
}

/** What the writer calls when it cuts a slow client. */
export interface FrameWriterHooks {
  /** Drop the connection (the socket), so nothing more is buffered for it. */
  readonly disconnect: () => void;
  /** Count the cut. */
  readonly onSlowClient: () => void;
  /**
   * Bytes the connection holds that the client has not read yet (the response's and its socket's buffers): the
   * stream hands a frame on at once, so without this a client that stops reading would make the process buffer
   * without bound. @default none counted
   */
  readonly backlog?: () => number;
  /** Call `listener` each time the connection's buffer drained; returns how to stop. */
  readonly onDrain?: (listener: () => void) => () => void;
}

/** Writes SSE frames to one client with a bounded buffer, heartbeats, and a final frame on shutdown. */
export interface FrameWriter {
  /**
   * Queue a frame. Resolves at once while the client keeps up; above the buffer, once the client drained it, or
   * once it was cut for being slow. Frames written after the stream stopped are dropped.
   */
  write(frame: string): Promise<void>;
  /** Aborts when the stream must stop: the client left, was cut, or the server ends the stream. */
  readonly signal: AbortSignal;
  /** End from the server's side: `shutdown` sends a final frame first; `slow_client` cuts the connection. */
  end(reason: StreamEnd): void;
  /** Stop the heartbeat and any timer (the stream is over). */
  stop(): void;
}

/** The frame that tells a client the server ended its stream on purpose (it may reconnect with its last id). */
export function closeFrame(reason: StreamEnd | 'runtime_closed'): string {
  return `event: close\ndata: ${JSON.stringify({ reason })}\n\n`;
}

/** A timer armed on the clock (boxed: a handle may be any value, even undefined). */
interface Armed {
  readonly handle: TimerHandle;
}

/** The frame writer: counts the bytes the client has not taken and paces `write` on them. */
class PacedWriter implements FrameWriter {
  private readonly controller = new AbortController();
  private pending = 0;
  private heartbeat: Armed | undefined;
  private slowTimer: Armed | undefined;
  private drained: (() => void) | undefined;
  private readonly unlistenDrain: () => void;

  constructor(
    private readonly stream: SSEStreamingApi,
    private readonly options: FrameWriterOptions,
    private readonly hooks: FrameWriterHooks,
  ) {
    // A client gone while a write waited for it to drain: wake that write, or the stream's loop waits forever.
    stream.onAbort(() => {
      this.controller.abort();
      this.release();
    });
    this.unlistenDrain = hooks.onDrain?.(() => this.releaseIfCaughtUp()) ?? (() => undefined);
    this.armHeartbeat();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  write(frame: string): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    this.send(frame);
    if (this.caughtUp()) return Promise.resolve();
    if (this.options.slowClientMs === 0) {
      this.cut();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.drained = resolve;
      this.slowTimer = { handle: this.options.clock.setTimeout(() => this.cut(), this.options.slowClientMs) };
    });
  }

  end(reason: StreamEnd): void {
    if (reason === 'slow_client') {
      this.cut();
      return;
    }
    if (!this.signal.aborted) this.send(this.options.shutdownFrame ?? closeFrame(reason));
    this.controller.abort();
    this.release();
  }

  stop(): void {
    if (this.heartbeat !== undefined) this.options.clock.clearTimeout(this.heartbeat.handle);
    this.heartbeat = undefined;
    this.unlistenDrain();
    this.release();
  }

  /** True while what the process holds for the client fits its buffer. */
  private caughtUp(): boolean {
    return this.pending + (this.hooks.backlog?.() ?? 0) <= this.options.clientBufferBytes;
  }

  private releaseIfCaughtUp(): void {
    if (this.caughtUp()) this.release();
  }

  /** Hand a frame to the stream and count its bytes until the client took them. */
  private send(frame: string): void {
    const bytes = Buffer.byteLength(frame);
    this.pending += bytes;
    void this.stream.write(frame).then(() => {
      this.pending -= bytes;
      this.releaseIfCaughtUp();
    });
  }

  /** Wake a `write` that waited for the client, and drop its slow-client timer. */
  private release(): void {
    if (this.slowTimer !== undefined) this.options.clock.clearTimeout(this.slowTimer.handle);
    this.slowTimer = undefined;
    const wake = this.drained;
    this.drained = undefined;
    wake?.();
  }

  /** Cut a client that fell too far behind: count it, stop the stream and drop the connection. */
  private cut(): void {
    if (this.signal.aborted) return;
    this.hooks.onSlowClient();
    this.controller.abort();
    this.hooks.disconnect();
    this.release();
  }

  /** A comment line every `heartbeatMs` (skipped while the client is behind: it has frames to read). */
  private armHeartbeat(): void {
    const { clock, heartbeatMs } = this.options;
    this.heartbeat = {
      handle: clock.setTimeout(() => {
        if (this.signal.aborted) return;
        if (this.caughtUp()) this.send(': heartbeat\n\n');
        this.armHeartbeat();
      }, heartbeatMs),
    };
  }
}

/** Create the writer of one SSE stream. */
export function createFrameWriter(
  stream: SSEStreamingApi,
  options: FrameWriterOptions,
  hooks: FrameWriterHooks,
): FrameWriter {
  return new PacedWriter(stream, options, hooks);
}
