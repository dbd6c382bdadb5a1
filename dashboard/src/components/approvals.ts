import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { Api, PendingCall } from '../api.js';
import { prettyJson } from '../format.js';

/** Parse the operator's JSON, or say why it is not JSON. */
function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (caught) {
    return { error: `Not valid JSON: ${caught instanceof Error ? caught.message : String(caught)}` };
  }
}

/** One waiting call: approve / reject / edit its arguments, or supply a deferred call's result. */
function PendingCard(props: { api: Api; call: PendingCall; onDone: () => void }) {
  const { api, call } = props;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(call.kind === 'approval' ? prettyJson(call.args) : '');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const run = (action: () => Promise<unknown>): void => {
    setBusy(true);
    setError(undefined);
    action().then(
      () => {
        setBusy(false);
        props.onDone();
      },
      (caught: unknown) => {
        setBusy(false);
        setError(caught instanceof Error ? caught.message : String(caught));
      },
    );
  };
  const withJson = (use: (value: unknown) => Promise<unknown>) => () => {
    const parsed = parseJson(text);
    if ('error' in parsed) setError(parsed.error);
    else run(() => use(parsed.value));
  };
  const fieldId = `json-${call.runId}-${call.toolCallId}`;
  const name = `${call.tool} (${call.toolCallId})`;
  return html`
    <li class="card" data-tool-call=${call.toolCallId}>
      <p>
        <strong>${call.tool}</strong>
        <span class="badge">${call.kind === 'approval' ? 'needs approval' : 'waits for a result'}</span>
        ${call.planStep === true ? html`<span class="badge">plan step</span>` : null} in
        <code>${call.sessionKey}</code> <span class="muted mono">${call.runId}</span>
      </p>
      <pre class="args" aria-label=${`Arguments of ${name}`}>${prettyJson(call.args)}</pre>
      ${
        call.kind === 'approval'
          ? html`<div class="actions">
              <button
                type="button"
                disabled=${busy}
                aria-label=${`Approve ${name}`}
                onClick=${() => run(() => api.approve(call, { decision: 'approve' }))}
              >
                Approve
              </button>
              <button
                type="button"
                class="danger"
                disabled=${busy}
                aria-label=${`Reject ${name}`}
                onClick=${() => run(() => api.approve(call, { decision: 'reject' }))}
              >
                Reject
              </button>
              ${
                call.planStep === true
                  ? null
                  : html`<button
                      type="button"
                      class="quiet"
                      aria-expanded=${editing}
                      aria-controls=${fieldId}
                      onClick=${() => setEditing(!editing)}
                    >
                      Edit arguments
                    </button>`
              }
            </div>`
          : null
      }
      ${
        editing || call.kind === 'deferred'
          ? html`<div class="edit">
              <label for=${fieldId}>${call.kind === 'approval' ? 'Arguments (JSON)' : 'Result (JSON)'}</label>
              <textarea
                id=${fieldId}
                rows="4"
                value=${text}
                onInput=${(event: Event) => setText((event.target as HTMLTextAreaElement).value)}
              ></textarea>
              ${
                call.kind === 'approval'
                  ? html`<button
                      type="button"
                      disabled=${busy}
                      onClick=${withJson((args) => api.approve(call, { decision: 'edit', args }))}
                    >
                      Approve with these arguments
                    </button>`
                  : html`<div class="actions">
                      <button
                        type="button"
                        disabled=${busy}
                        onClick=${withJson((output) => api.supply(call, { output }))}
                      >
                        Send result
                      </button>
                      <button
                        type="button"
                        class="danger"
                        disabled=${busy}
                        onClick=${() => run(() => api.supply(call, { error: text || 'refused by an operator' }))}
                      >
                        Send as error
                      </button>
                    </div>`
              }
            </div>`
          : null
      }
      ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
    </li>
  `;
}

/** Every pending approval and deferred tool call across sessions. */
export function ApprovalsPanel(props: { api: Api; calls: readonly PendingCall[]; onDone: () => void }) {
  return html`
    <section class="panel approvals" aria-labelledby="approvals-title">
      <h2 id="approvals-title">Waiting calls (${props.calls.length})</h2>
      ${
        props.calls.length === 0
          ? html`<p class="muted">No approval or tool result is awaited.</p>`
          : html`<ul class="cards">
              ${props.calls.map(
                (call) =>
                  html`<${PendingCard}
                    key=${`${call.runId}:${call.toolCallId}`}
                    api=${props.api}
                    call=${call}
                    onDone=${props.onDone}
                  />`,
              )}
            </ul>`
      }
    </section>
  `;
}
