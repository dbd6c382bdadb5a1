import type { SSEStreamingApi } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { fakeClock } from 'agentlanes/testing';
import { createFrameWriter } from '../../src/server/frame-writer.js';

/**
 * A stream that hands every frame on at once, as Node's response does (the bytes then wait in the connection's
 * buffers, which `backlog` reports), and a connection whose buffer the test fills and drains.
 */
function connection() {
  const written: string[] = [];
  const stream = {
    write: (frame: string) => {
      written.push(frame);
      return Promise.resolve(stream);
    },
    onAbort: () => undefined,
  } as unknown as SSEStreamingApi;
  const drainListeners = new Set<() => void>();
  let buffered = 0;
  const state = { cuts: 0, disconnected: false };
  return {
    stream,
    written,
    state,
    hooks: {
      disconnect: () => (state.disconnected = true),
      onSlowClient: () => (state.cuts += 1),
      backlog: () => buffered,
      onDrain: (listener: () => void) => {
        drainListeners.add(listener);
        return () => drainListeners.delete(listener);
      },
    },
    /** The client did not read: what was written stays in the connection's buffer. */
    hold: (bytes: number) => (buffered += bytes),
    /** The client read everything. */
    drain: () => {
      buffered = 0;
      for (const listener of drainListeners) listener();
    },
    listeners: () => drainListeners.size,
  };
}

/** A writer with a 4 KB client buffer over a new connection, on a fake clock. */
function open(options: { heartbeatMs: number; slowClientMs: number }) {
  const clock = fakeClock({ now: 0 });
  const link = connection();
  const writer = createFrameWriter(link.stream, { clock, clientBufferBytes: 4096, ...options }, link.hooks);
  return { clock, link, writer };
}

const frame = `data: ${'x'.repeat(1000)}\n\n`;

describe('createFrameWriter', () => {
  it('waits once the connection holds more than clientBufferBytes, though the stream took every frame', async () => {
    const { link, writer } = open({ heartbeatMs: 60_000, slowClientMs: 10_000 });
    for (let index = 0; index < 4; index++) {
      await writer.write(frame);
      link.hold(Buffer.byteLength(frame));
    }
    // 4,024 bytes held: the next frame goes out, then the writer waits for the client.
    let resolved = false;
    const waiting = writer.write(frame).then(() => (resolved = true));
    link.hold(Buffer.byteLength(frame));
    await Promise.resolve();
    await Promise.resolve();
    expect(resolved).toBe(false);

    link.drain();
    await waiting;
    expect(link.state).toEqual({ cuts: 0, disconnected: false });
    writer.stop();
    expect(link.listeners()).toBe(0);
  });

  it('cuts a client whose connection stays above clientBufferBytes for slowClientMs', async () => {
    const { clock, link, writer } = open({ heartbeatMs: 60_000, slowClientMs: 10_000 });
    link.hold(10_000);
    const waiting = writer.write(frame);
    await clock.advance(9_999);
    expect(link.state.cuts).toBe(0);
    await clock.advance(1);
    await waiting;
    expect(link.state).toEqual({ cuts: 1, disconnected: true });
    expect(writer.signal.aborted).toBe(true);
    writer.stop();
  });

  it('sends no heartbeat while the connection is behind', async () => {
    const { clock, link, writer } = open({ heartbeatMs: 1_000, slowClientMs: 0 });
    await clock.advance(1_000);
    expect(link.written).toEqual([': heartbeat\n\n']);
    link.hold(5_000);
    await clock.advance(1_000);
    expect(link.written).toHaveLength(1);
    writer.stop();
  });
});
