import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Api, QueuedMessage, RuntimeEvent } from '../api.js';
import { followEvents } from '../follow-events.js';
import type { SessionRow } from '../store.js';
import { foldEvent, type TimelineEntry } from '../timeline.js';

const queueEvents = new Set([
  'message.queued',
  'message.collected',
  'message.admitted',
  'message.dropped',
  'run.started',
]);

/** The session's timeline followed live from its first event, and its queue re-read when the queue moves. */
function useSessionFeed(api: Api, sessionKey: string) {
  const [entries, setEntries] = useState<TimelineEntry[]>([]);
  const [queue, setQueue] = useState<QueuedMessage[]>([]);
  const [error, setError] = useState<string | undefined>(undefined);
  const reload = useRef<() => void>(() => undefined);
  useEffect(() => {
    const controller = new AbortController();
    const streamText = new Map<number, string>();
    let pending: ReturnType<typeof setTimeout> | undefined;
    const loadQueue = (): void => {
      clearTimeout(pending);
      pending = setTimeout(() => {
        api.queue(sessionKey).then(setQueue, (caught: unknown) => setError(String(caught)));
      }, 50);
    };
    reload.current = loadQueue;
    setEntries([]);
    loadQueue();
    const onEvent = (event: RuntimeEvent): void => {
      setEntries((current) => foldEvent(current, streamText, event));
      if (queueEvents.has(event.type)) loadQueue();
    };
    void followEvents({
      url: `/v1/sessions/${encodeURIComponent(sessionKey)}/events`,
      token: api.token,
      signal: controller.signal,
      onEvent,
    });
    return () => {
      clearTimeout(pending);
      controller.abort();
    };
  }, [api, sessionKey]);
  return { entries, queue, error, setError, reloadQueue: () => reload.current() };
}

/** One session: its live timeline (the `agentlanes replay` vocabulary), its queue and an abort button. */
export function SessionView(props: {
  api: Api;
  row: SessionRow;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { api, row } = props;
  const { entries, queue, error, setError, reloadQueue } = useSessionFeed(api, row.key);
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const element = list.current;
    if (element !== null) element.scrollTop = element.scrollHeight;
  }, [entries]);
  const act = (action: () => Promise<unknown>) => () => {
    setError(undefined);
    action().then(
      () => {
        reloadQueue();
        props.onChanged();
      },
      (caught: unknown) => setError(caught instanceof Error ? caught.message : String(caught)),
    );
  };
  const origin = entries[0]?.at ?? 0;
  const active = row.runId !== undefined && row.state !== 'idle';
  return html`
    <section class="panel session-view" aria-labelledby="session-title">
      <div class="panel-head">
        <h2 id="session-title">Session <code>${row.key}</code></h2>
        <span class=${`state state-${row.state}`} data-testid="session-state">${row.state}</span>
        <button type="button" class="danger" disabled=${!active} onClick=${act(() => api.abort(row.key))}>
          Abort run
        </button>
        <button type="button" class="quiet" onClick=${props.onClose} aria-label="Close session view">
          Close
        </button>
      </div>
      ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
      <h3>Queue (${queue.length})</h3>
      ${
        queue.length === 0
          ? html`<p class="muted">Nothing queued.</p>`
          : html`<ul class="queue">
              ${queue.map(
                (message) => html`
                  <li key=${message.messageId}>
                    <span class="mono">${message.messageId}</span>
                    <span class="muted">${message.mode}</span>
                    <span class="text">${message.text}</span>
                    <button
                      type="button"
                      aria-label=${`Cancel queued message ${message.messageId}`}
                      onClick=${act(() => api.cancel(row.key, message.messageId))}
                    >
                      Cancel
                    </button>
                  </li>
                `,
              )}
            </ul>`
      }
      <h3>Timeline</h3>
      <ol class="timeline" role="log" aria-label=${`Timeline of ${row.key}`} ref=${list}>
        ${entries.map(
          (entry) => html`
            <li key=${entry.id}>
              <span class="time">+${((entry.at - origin) / 1000).toFixed(3)}s</span>
              <span class=${`label tone-${entry.description.tone}`}>${entry.description.label}</span>
              ${entry.runId === undefined ? null : html`<span class="muted mono">${entry.runId}</span>`}
              <span class="details">${entry.description.details.join('  ')}</span>
            </li>
          `,
        )}
      </ol>
    </section>
  `;
}
