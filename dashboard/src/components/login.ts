import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ApiError, createApi } from '../api.js';

/** The sign-in form: checks the token against `/v1/stats` before the page keeps it. */
export function Login(props: { onToken: (token: string) => void; notice?: string | undefined }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>(props.notice);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await createApi(token.trim()).stats();
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
        <p id="login-help">Sign in with one of the server's API tokens. It is kept for this tab only.</p>
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
