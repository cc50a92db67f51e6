// The account page's "Browsers notified of alarms": the browsers subscribed to the account's push
// alarms (src/push/), each with "Send a test notification" and "Remove", and "Notify this browser".
// The page's script (assets/push.js) registers the service worker served here at /console/sw.js
// (scope /console/), subscribes with the service's VAPID public key (the form's data-push-key) and
// posts the subscription as an ordinary console form (CSRF field included). Mounted by the account
// page group (./account.ts), which renders the section and shows the outcome of each form.
import { readFile } from 'node:fs/promises';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { queryOf } from '../db/query.ts';
import { pushEndpointProblem, subscriptionFields } from '../push/subscription.ts';
import { vapidOnce } from '../push/vapid.ts';
import { form, html, notice, type Html } from './html.ts';
import { fieldErrors, rowId, when, type Account, type Kit } from './kit.ts';

/** Shows the account page with a message at its top and the given status. */
export type ShowAccount = (ctx: Context, who: Account, message: Html, status?: number) => Promise<void>;

const FIELD_NAMES: Record<string, string> = { endpoint: 'endpoint', p256dh: 'key (p256dh)', auth: 'secret (auth)' };

/** Mounts the push routes; returns the section of the account page. */
export function pushBrowsers(router: Router, { sql, config, csrf, signedInForm }: Kit, show: ShowAccount) {
  const vapid = vapidOnce(queryOf(sql), config);

  // The service worker: served from /console/ so that it may control the console's pages only.
  router.get('/sw.js', async (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Service-Worker-Allowed', '/console/');
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Content-Security-Policy', "default-src 'none'");
    ctx.body = await readFile(new URL('./assets/sw.js', import.meta.url));
  });

  router.post('/push/subscribe', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const parsed = subscriptionFields.safeParse(fields);
    const problem = parsed.success ? await pushEndpointProblem(parsed.data.endpoint, config) : null;
    const refused = (errors: Record<string, string>) => show(ctx, who, notice(html`This browser's subscription was refused, and nothing was stored: ${Object.entries(errors)
      .map(([name, error]) => `the ${FIELD_NAMES[name] ?? name}: ${error}`).join(' ')}`, 'error'), 422);
    if (!parsed.success) return refused(fieldErrors(parsed.error));
    if (problem) return refused({ endpoint: problem });
    const { endpoint, p256dh, auth } = parsed.data;
    try {
      await sql`select app.push_subscribe(${who.owner}, ${endpoint}, ${p256dh}, ${auth}, ${ctx.get('user-agent').slice(0, 200)})`;
    } catch (error) {
      const { code, column_name: column, message } = error as { code?: string; column_name?: string; message: string };
      if (code === 'MD422') return refused({ [column ?? 'endpoint']: message });
      throw error;
    }
    await show(ctx, who, notice('This browser is notified from now on when your push alarms trigger. Send it a test notification to check.'));
  });

  router.post('/push/test', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const id = rowId.safeParse(fields.subscription);
    const [row] = id.success ? await sql<{ id: string | null }[]>`select app.queue_test_push(${who.owner}, ${id.data}) as id` : [];
    if (!row?.id) return show(ctx, who, notice('That browser is no longer subscribed (removed in another tab?); nothing was sent.', 'error'), 404);
    await show(ctx, who, notice('Test notification sent: it appears in that browser within a few seconds.'));
  });

  router.post('/push/remove', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const id = rowId.safeParse(fields.subscription);
    const [row] = id.success ? await sql<{ removed: boolean }[]>`select app.push_unsubscribe(${who.owner}, ${id.data}) as removed` : [];
    if (!row?.removed) return show(ctx, who, notice('That browser is no longer subscribed (removed in another tab?); nothing was changed.', 'error'), 404);
    await show(ctx, who, notice('Browser removed: it is not notified any more.'));
  });

  return async function section(ctx: Context, who: Account): Promise<Html> {
    const [{ publicKey }, browsers] = await Promise.all([
      vapid(),
      sql<{ id: string; user_agent: string; push_service: string | null; created_at: Date; last_success_at: Date | null }[]>`select * from app.push_subscriptions_of(${who.owner})`,
    ]);
    const token = csrf(ctx);
    return html`<h2 id="push">Browsers notified of alarms</h2>
<p>An alarm created with <code>"notification": "push"</code> shows a notification in each browser listed here; clicking it opens the alarm.</p>
${browsers.length === 0 ? html`<p>No browser yet.</p>` : html`<div class="table"><table><thead><tr><th>Browser</th><th>Push service</th><th>Subscribed</th><th>Last notified</th><th>Actions</th></tr></thead><tbody>
${browsers.map((b) => html`<tr><td data-label="Browser">${b.user_agent || 'unknown'}</td><td data-label="Push service">${b.push_service ?? 'unknown'}</td><td data-label="Subscribed">${when(b.created_at)}</td><td data-label="Last notified">${b.last_success_at ? when(b.last_success_at) : 'never'}</td>
<td class="row-actions">${form('/console/push/test', token, html`<input type="hidden" name="subscription" value="${b.id}">`, 'Send a test notification', 'secondary')}
${form('/console/push/remove', token, html`<input type="hidden" name="subscription" value="${b.id}">`, 'Remove', 'danger')}</td></tr>`)}
</tbody></table></div>`}
<form method="post" action="/console/push/subscribe" id="push-subscribe" data-push-key="${publicKey}"><input type="hidden" name="csrf" value="${token}">
<input type="hidden" name="endpoint" value=""><input type="hidden" name="p256dh" value=""><input type="hidden" name="auth" value="">
<button type="submit" hidden>Notify this browser</button></form>
<p id="push-status" role="status">Notifying a browser needs JavaScript and a browser that supports push notifications.</p>`;
  };
}
