import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, createApi } from '../api.js';

/** Why a token that the server accepts is still no operator's, or undefined when it is one. */
function notAnOperator(grant: { can: string[]; sessionKeyPrefixes?: string[] }): string | undefined {
  if (grant.sessionKeyPrefixes !== undefined) {
    return 'This token is scoped to some sessions; the dashboard needs an operator token.';
  }
  if (!grant.can.includes('operate')) {
    return 'This token lacks the "operate" capability; the dashboard needs an operator token.';
  }
  return undefined;
}

/**
 * The sign-in form: keeps a token only once the server says it is an operator's (unscoped, with `operate`) and
 * it reads `/v1/stats`.
 */
export function Login(props: { onToken: (token: string) => void; notice?: string | undefined }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(props.notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const api = createApi(token.trim());
      const refusal = notAnOperator(await api.capabilities());
      if (refusal !== undefined) {
        setError(refusal);
        return;
      }
      await api.stats();
      props.onToken(token.trim());
    } catch (caught) {
      const refused = caught instanceof ApiError && (caught.status === 401 || caught.status === 403);
      setError(refused ? 'The server refused this token.' : `Could not reach the server: ${String(caught)}`);
    } finally {
      setBusy(false);
    }
  };
  return html`
    <main class="login">
      <h1>agentlanes</h1>
      <form onSubmit=${submit} aria-describedby="login-help">
        <p id="login-help">
          Sign in with an operator token of the server (not scoped to sessions, with the "operate"
          capability). It is kept for this tab only.
        </p>
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          required
          value=${token}
          onInput=${(event: Event) => setToken((event.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled=${busy}>Sign in</button>
        ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
      </form>
    </main>
  `;
}
