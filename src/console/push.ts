// The account page's "Browsers notified of alarms": the browsers subscribed to the account's push
// alarms (src/push/), each with "Send a test notification" and "Remove", and "Notify this browser".
// The page's script (assets/push.js) registers the service worker served here at /console/sw.js
// (scope /console/), subscribes with the service's VAPID public key (the form's data-push-key) and
// posts the subscription as an ordinary console form (CSRF field included). Mounted by the account
// page group (./account.ts), which renders the section and shows the outcome of each form. Markup
// in ./push.views.ts.
import { readFile } from 'node:fs/promises';
import type { Context } from 'koa';
import { queryOf } from '../db/query.ts';
import { pushEndpointProblem, subscriptionFields } from '../push/subscription.ts';
import { vapidOnce } from '../push/vapid.ts';
import { html, notice, type Html } from './html.ts';
import { fieldErrors, rowId, type Account, type Fields, type Kit, type Routes } from './kit.ts';
import { browsersView, type BrowserRow } from './push.views.ts';

/** Shows the account page with a message at its top and the given status. */
export type ShowAccount = (ctx: Context, who: Account, message: Html, status?: number) => Promise<void>;
/** The account page's section of browsers. */
export type PushSection = (ctx: Context, who: Account) => Promise<Html>;

const FIELD_NAMES: Record<string, string> = { endpoint: 'endpoint', p256dh: 'key (p256dh)', auth: 'secret (auth)' };

/** Declares the push routes; returns the section of the account page. */
export function pushBrowsers(routes: Routes, kit: Kit, show: ShowAccount): PushSection {
  const vapid = vapidOnce(queryOf(kit.sql), kit.config);
  routes.get('/sw.js', serviceWorker);
  routes.signedIn.post('/push/subscribe', (ctx, who, fields) => subscribe(kit, show, ctx, who, fields));
  routes.signedIn.post('/push/test', (ctx, who, fields) => sendTest(kit, show, ctx, who, fields));
  routes.signedIn.post('/push/remove', (ctx, who, fields) => remove(kit, show, ctx, who, fields));
  return async (ctx, who) => {
    const [{ publicKey }, browsers] = await Promise.all([vapid(), kit.sql<BrowserRow[]>`select * from app.push_subscriptions_of(${who.owner})`]);
    return browsersView(browsers, publicKey, kit.csrf(ctx));
  };
}

/** The service worker: served from /console/ so that it may control the console's pages only. */
async function serviceWorker(ctx: Context) {
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.set('Service-Worker-Allowed', '/console/');
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', "default-src 'none'");
  ctx.body = await readFile(new URL('./assets/sw.js', import.meta.url));
}

async function subscribe({ sql, config }: Kit, show: ShowAccount, ctx: Context, who: Account, fields: Fields) {
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
}

async function sendTest({ sql }: Kit, show: ShowAccount, ctx: Context, who: Account, fields: Fields) {
  const id = rowId.safeParse(fields.subscription);
  const [row] = id.success ? await sql<{ id: string | null }[]>`select app.queue_test_push(${who.owner}, ${id.data}) as id` : [];
  if (!row?.id) return show(ctx, who, notice('That browser is no longer subscribed (removed in another tab?); nothing was sent.', 'error'), 404);
  await show(ctx, who, notice('Test notification sent: it appears in that browser within a few seconds.'));
}

async function remove({ sql }: Kit, show: ShowAccount, ctx: Context, who: Account, fields: Fields) {
  const id = rowId.safeParse(fields.subscription);
  const [row] = id.success ? await sql<{ removed: boolean }[]>`select app.push_unsubscribe(${who.owner}, ${id.data}) as removed` : [];
  if (!row?.removed) return show(ctx, who, notice('That browser is no longer subscribed (removed in another tab?); nothing was changed.', 'error'), 404);
  await show(ctx, who, notice('Browser removed: it is not notified any more.'));
}
