import { html } from 'htm/preact';
import type { ProfileStats } from '../api.js';
import { countdown } from '../format.js';

/** Each auth profile: ready or cooling (with a live countdown), and its attempts since the runtime started. */
export function ProfilesPanel(props: {
  profiles: Readonly<Record<string, ProfileStats>>;
  serverNow: number;
}) {
  const entries = Object.entries(props.profiles);
  return html`
    <section class="panel profiles" aria-labelledby="profiles-title">
      <h2 id="profiles-title">Auth profiles</h2>
      ${
        entries.length === 0
          ? html`<p class="muted">No auth profiles are configured.</p>`
          : html`<div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Profile</th>
                    <th scope="col">State</th>
                    <th scope="col">Cooldown</th>
                    <th scope="col">Succeeded</th>
                    <th scope="col">Failed</th>
                  </tr>
                </thead>
                <tbody>
                  ${entries.map(([id, profile]) => {
                    const remaining = profile.availableAt - props.serverNow;
                    const cooling = remaining > 0;
                    return html`
                      <tr key=${id} data-profile=${id}>
                        <th scope="row">${id}</th>
                        <td>
                          <span class=${`state state-${cooling ? 'cooling' : 'ready'}`}>
                            ${cooling ? 'cooling' : 'ready'}</span
                          >
                        </td>
                        <td class="mono" data-countdown=${id}>
                          ${
                            cooling
                              ? html`<span aria-label=${`ready again in ${countdown(remaining)}`}>
                                  ${countdown(remaining)}</span
                                >`
                              : '—'
                          }
                        </td>
                        <td>${profile.succeeded}</td>
                        <td>${profile.failed}</td>
                      </tr>
                    `;
                  })}
                </tbody>
              </table>
            </div>`
      }
    </section>
  `;
}
