import { html } from 'htm/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { createApi } from '../api.js';
import { useDashboard, useNow } from '../hooks.js';
import { createDashboardStore } from '../store.js';
import { ApprovalsPanel } from './approvals.js';
import { ThroughputChart } from './chart.js';
import { Header } from './header.js';
import { Login } from './login.js';
import { ProfilesPanel } from './profiles.js';
import { SessionView } from './session-view.js';
import { SessionsTable } from './sessions-table.js';

/** Where the token is kept: this tab's session storage, never the URL or a cookie. */
const tokenKey = 'agentlanes.token';

/** The signed-in page: totals, sessions, the selected session, waiting calls, profiles and the chart. */
function Dashboard(props: { token: string; onRefused: () => void; onSignOut: () => void }) {
  const api = useMemo(() => createApi(props.token), [props.token]);
  const store = useMemo(() => createDashboardStore(api), [api]);
  const state = useDashboard(store);
  const now = useNow(1000);
  const [selected, setSelected] = useState<string | undefined>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    store.start(controller.signal).catch(() => undefined);
    return () => controller.abort();
  }, [store]);
  useEffect(() => {
    if (state.connection === 'refused') props.onRefused();
  }, [state.connection]);
  const serverNow = now + state.clockOffsetMs;
  const row = selected === undefined ? undefined : state.rows.get(selected);
  return html`
    <${Header} state=${state} now=${now} onSignOut=${props.onSignOut} />
    <main class="grid">
      <${SessionsTable}
        rows=${state.rows}
        version=${state.rowsVersion}
        now=${serverNow}
        loadMs=${state.loadMs}
        selected=${selected}
        onSelect=${setSelected}
      />
      ${
        row === undefined
          ? html`<section class="panel session-view empty">
              <h2>Session</h2>
              <p class="muted">Choose a session in the table to follow its timeline.</p>
            </section>`
          : html`<${SessionView}
              api=${api}
              row=${row}
              onClose=${() => setSelected(undefined)}
              onChanged=${() => store.refreshSession(row.key)}
            />`
      }
      <${ApprovalsPanel} api=${api} calls=${state.approvals} onDone=${() => store.refreshApprovals()} />
      <${ProfilesPanel} profiles=${state.stats?.profiles ?? {}} serverNow=${serverNow} />
      <${ThroughputChart} rates=${state.rates} />
    </main>
  `;
}

/** The one-time code of a sign-in link (`#sign-in=<code>`), taken out of the address bar at once. */
function takeSignInCode(): string | undefined {
  const match = /^#sign-in=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (match === null) return undefined;
  history.replaceState(null, '', location.pathname + location.search);
  return match[1];
}

/** Trade a sign-in code for the operator token, once (`POST /dashboard/sign-in`); undefined when refused. */
async function redeemSignInCode(code: string): Promise<string | undefined> {
  const response = await fetch('/dashboard/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  if (!response.ok) return undefined;
  const body = (await response.json()) as { token?: unknown };
  return typeof body.token === 'string' ? body.token : undefined;
}

/** The whole page: the sign-in form until a token is accepted, then the dashboard. */
export function App() {
  const [token, setToken] = useState<string | undefined>(sessionStorage.getItem(tokenKey) ?? undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  useEffect(() => {
    const code = takeSignInCode();
    if (code === undefined) return;
    redeemSignInCode(code)
      .catch(() => undefined)
      .then((redeemed) => {
        if (redeemed !== undefined) signIn(redeemed);
        else setNotice('This sign-in link was used or has expired; sign in with a token.');
      })
      .catch(() => undefined);
  }, []);
  const signIn = (value: string): void => {
    sessionStorage.setItem(tokenKey, value);
    setNotice(undefined);
    setToken(value);
  };
  const signOut = (message?: string): void => {
    sessionStorage.removeItem(tokenKey);
    setNotice(message);
    setToken(undefined);
  };
  if (token === undefined) return html`<${Login} key=${notice ?? ''} onToken=${signIn} notice=${notice} />`;
  return html`<${Dashboard}
    key=${token}
    token=${token}
    onRefused=${() => signOut('The server refused the saved token; sign in again.')}
    onSignOut=${() => signOut()}
  />`;
}
