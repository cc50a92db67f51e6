// The markup of the account page's "Browsers notified of alarms" (./push.ts).
import { form, html } from './html.ts';
import { when } from './kit.ts';

export interface BrowserRow { id: string; user_agent: string; push_service: string | null; created_at: Date; last_success_at: Date | null }

/** The section: each browser with its test and remove forms, and the form push.js fills to subscribe this browser. */
export const browsersView = (browsers: BrowserRow[], publicKey: string, csrf: string) => html`<h2 id="push">Browsers notified of alarms</h2>
<p>An alarm created with <code>"notification": "push"</code> shows a notification in each browser listed here; clicking it opens the alarm.</p>
${browsers.length === 0 ? html`<p>No browser yet.</p>` : html`<div class="table"><table><thead><tr><th>Browser</th><th>Push service</th><th>Subscribed</th><th>Last notified</th><th>Actions</th></tr></thead><tbody>
${browsers.map((b) => html`<tr><td data-label="Browser">${b.user_agent || 'unknown'}</td><td data-label="Push service">${b.push_service ?? 'unknown'}</td><td data-label="Subscribed">${when(b.created_at)}</td><td data-label="Last notified">${b.last_success_at ? when(b.last_success_at) : 'never'}</td>
<td class="row-actions">${form('/console/push/test', csrf, html`<input type="hidden" name="subscription" value="${b.id}">`, 'Send a test notification', 'secondary')}
${form('/console/push/remove', csrf, html`<input type="hidden" name="subscription" value="${b.id}">`, 'Remove', 'danger')}</td></tr>`)}
</tbody></table></div>`}
<form method="post" action="/console/push/subscribe" id="push-subscribe" data-push-key="${publicKey}"><input type="hidden" name="csrf" value="${csrf}">
<input type="hidden" name="endpoint" value=""><input type="hidden" name="p256dh" value=""><input type="hidden" name="auth" value="">
<button type="submit" hidden>Notify this browser</button></form>
<p id="push-status" role="status">Notifying a browser needs JavaScript and a browser that supports push notifications.</p>`;
