import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { RuntimeEvent } from './api.js';

/** What `followEvents` needs: the stream's URL, the token, and where to hand events. */
export interface FollowOptions {
  readonly url: string;
  readonly token: string;
  /** Resume after this cursor (sent as `Last-Event-ID`); absent: the server's default start. */
  readonly after?: string;
  readonly signal: AbortSignal;
  onEvent(event: RuntimeEvent): void;
  /** `open` once the stream answers, `retrying` after it dropped, `refused` on 401/403 (no retry). */
  onState?(state: 'open' | 'retrying' | 'refused'): void;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function isRuntimeEvent(value: unknown): value is RuntimeEvent {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { type?: unknown }).type === 'string' &&
    typeof (value as { sessionKey?: unknown }).sessionKey === 'string'
  );
}

/** Read one connection to its end; returns the last event id seen, and the server's retry advice. */
async function readStream(
  response: Response,
  options: FollowOptions,
  state: { lastId: string | undefined; retryMs: number },
): Promise<void> {
  if (response.body === null) return;
  const messages = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream({ onRetry: (ms) => (state.retryMs = ms) }))
    .getReader();
  for (;;) {
    const { done, value } = await messages.read();
    if (done) return;
    if (value.id !== undefined && value.id !== '') state.lastId = value.id;
    let data: unknown;
    try {
      data = JSON.parse(value.data);
    } catch {
      continue;
    }
    if (isRuntimeEvent(data)) options.onEvent(data);
  }
}

/**
 * Follow a server-sent event stream with `fetch` (an `EventSource` cannot send the bearer header), parsing it
 * with eventsource-parser, and reconnect after a drop from the last id seen, so no event is missed or repeated.
 * Resolves once `signal` aborts or the server refuses the token.
 */
export async function followEvents(options: FollowOptions): Promise<void> {
  const state = { lastId: options.after, retryMs: 1000 };
  while (!options.signal.aborted) {
    try {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.token}`,
        accept: 'text/event-stream',
      };
      if (state.lastId !== undefined) headers['last-event-id'] = state.lastId;
      const response = await fetch(options.url, { headers, signal: options.signal });
      if (response.status === 401 || response.status === 403) {
        options.onState?.('refused');
        return;
      }
      if (response.ok) {
        options.onState?.('open');
        await readStream(response, options, state);
      }
    } catch {
      // A dropped connection or an abort: retry below unless aborted.
    }
    if (options.signal.aborted) return;
    options.onState?.('retrying');
    await pause(state.retryMs, options.signal);
  }
}
