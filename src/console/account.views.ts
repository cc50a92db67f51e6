// The account page's markup (./account.ts): who is signed in and its sessions.
import { form, html, type Html } from './html.ts';
import { when, type Account } from './kit.ts';

export interface SessionRow { id: string; user_agent: string; created_at: Date; last_seen_at: Date; expires_at: Date }

/** The account page: `message` at its top, the sessions (revoke one, sign out everywhere), then the push section. */
export const accountView = (who: Account, sessions: SessionRow[], csrf: string, pushSection: Html, message?: Html) => html`${message ?? ''}<p>Signed in as <strong>${who.email}</strong> (${who.role}).</p>
<h2>Sessions</h2>
<div class="table"><table><thead><tr><th>Browser</th><th>Signed in</th><th>Last used</th><th></th></tr></thead><tbody>
${sessions.map((s) => html`<tr><td data-label="Browser">${s.user_agent || 'unknown'}${s.id === who.session_id ? ' (this one)' : ''}</td><td data-label="Signed in">${when(s.created_at)}</td><td data-label="Last used">${when(s.last_seen_at)}</td>
<td>${form('/console/sessions/revoke', csrf, html`<input type="hidden" name="session" value="${s.id}">`, 'Revoke', 'inline')}</td></tr>`)}
</tbody></table></div>
${form('/console/sessions/revoke-all', csrf, [], 'Sign out everywhere')}
${pushSection}`;
