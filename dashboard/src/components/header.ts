import { html } from 'htm/preact';
import type { Connection, DashboardState } from '../store.js';
import { rate } from '../format.js';

const connectionText: Record<Connection, string> = {
  connecting: 'connecting…',
  open: 'live',
  retrying: 'reconnecting…',
  refused: 'token refused',
};

/** The live totals: sessions, runs, rates and the global lane per provider. */
export function Header(props: { state: DashboardState; now: number; onSignOut: () => void }) {
  const { stats, rows, connection } = props.state;
  const live = stats?.liveSessions ?? 0;
  const total = Math.max(stats?.sessions?.total ?? rows.size, live);
  const hibernated = total - live;
  let running = 0;
  for (const row of rows.values()) if (row.runId !== undefined && row.state !== 'idle') running += 1;
  const rates = props.state.rates.perSecond(props.now);
  const lanes = Object.entries(stats?.lanes ?? {});
  return html`
    <header class="top">
      <div class="brand">
        <h1>agentlanes</h1>
        <span class=${`connection ${connection}`} role="status">${connectionText[connection]}</span>
        <button type="button" class="quiet" onClick=${props.onSignOut}>Sign out</button>
      </div>
      <dl class="totals" aria-label="Totals">
        <div>
          <dt>Sessions live</dt>
          <dd data-total="live">${live}</dd>
        </div>
        <div>
          <dt>Hibernated</dt>
          <dd data-total="hibernated">${hibernated}</dd>
        </div>
        <div>
          <dt>Runs active</dt>
          <dd data-total="runs">${running}</dd>
        </div>
        <div>
          <dt>Messages/s</dt>
          <dd data-total="messages">${rate(rates.messages)}</dd>
        </div>
        <div>
          <dt>Events/s</dt>
          <dd data-total="events">${rate(rates.events)}</dd>
        </div>
        ${lanes.map(
          ([name, lane]) => html`
            <div key=${name}>
              <dt>Lane ${name}</dt>
              <dd data-lane=${name}>${lane.running} active / ${lane.pending} pending</dd>
            </div>
          `,
        )}
      </dl>
    </header>
  `;
}
