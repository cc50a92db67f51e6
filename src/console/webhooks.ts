// The account's webhook endpoints: register (the API's validation and private-target check), the
// signing secret shown once, rotate it, send a test event, re-enable, delete; and each endpoint's
// delivery log (every event and attempt: time, HTTP status or error, duration, the start of the
// receiver's answer) with a Redeliver button. The same SQL functions as /api/v1/webhooks
// (the webhook-endpoint core, src/webhooks/endpoints.ts); rotating and redelivering are console-only (920_console_alarms_webhooks.sql).
import type { Context } from 'koa';
import {
  createWebhookEndpoint, deleteWebhookEndpoint, enableWebhookEndpoint, endpointBody, getWebhookEndpoint, listWebhookDeliveries,
  listWebhookEndpoints, sendWebhookTest, WEBHOOK_ENDPOINT_LIMIT, WEBHOOK_EVENTS,
} from '../webhooks/endpoints.ts';
import { RESPONSE_EXCERPT_BYTES } from '../webhooks/post.ts';
import { field, form, html, navigation, notice, shownOnce, type Html } from './html.ts';
import { fieldErrors, pageNumber, refusal, rowId, when, type Account, type Errors, type Fields, type PageGroup } from './kit.ts';

const PER_PAGE = 20;
const GONE = 'That endpoint does not exist (deleted in another tab?); nothing was changed.';

/** app.webhook_endpoint_json */
interface Endpoint {
  id: number;
  url: string;
  events: string[];
  status: 'delivering' | 'disabled';
  consecutive_failures: number;
  disabled_at: string | null;
  created_at: string;
}

/** One delivery of app.list_webhook_deliveries. */
interface Delivery {
  id: number;
  event: string;
  event_id: string;
  test: boolean;
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  error: string | null;
  attempts: number;
  delivered_at: string | null;
  created_at: string;
  attempt_log: { started_at: string; outcome: string; response_status: number | null; duration_ms: number | null; error: string | null; response_excerpt: string | null }[];
}

/** What a signed secret is for, said where it is shown. */
const SECRET_NOTE = 'Every delivery carries X-Service-Signature: t=<unix time>,v1=<HMAC-SHA256 of "<t>.<raw body>" keyed with this secret, hex>.';

export const webhookPages: PageGroup = (router, { sql, config, csrf, page, signedIn, signedInForm }) => {
  navigation('/console/webhooks', 'Webhooks');

  // ---- the endpoints
  async function endpointsPage(ctx: Context, who: Account, extra: { message?: Html; values?: Fields; errors?: Errors; status?: number } = {}) {
    const endpoints = await listWebhookEndpoints<Endpoint>(sql, who.owner);
    const token = csrf(ctx);
    const { values = {}, errors = {} } = extra;
    page(ctx, 'Webhooks', html`${extra.message ?? ''}
<h2>Your endpoints</h2>
${endpoints.length === 0 ? html`<p>No endpoint yet.</p>` : html`<div class="table"><table><thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Created</th><th>Actions</th></tr></thead><tbody>
${endpoints.map((endpoint) => html`<tr><td data-label="URL"><code>${endpoint.url}</code></td><td data-label="Events">${endpoint.events.join(', ')}</td>
<td data-label="Status">${endpoint.status === 'delivering' ? `delivering${endpoint.consecutive_failures ? ` (${endpoint.consecutive_failures} failed in a row)` : ''}` : html`<strong>disabled</strong> ${when(endpoint.disabled_at!)} after ${endpoint.consecutive_failures} failed deliveries in a row`}</td>
<td data-label="Created">${when(endpoint.created_at)}</td>
<td class="row-actions"><a href="/console/webhooks/${String(endpoint.id)}">Delivery log</a>
${endpoint.status === 'disabled' ? form(`/console/webhooks/${endpoint.id}/enable`, token, [], 'Re-enable') : form(`/console/webhooks/${endpoint.id}/test`, token, [], 'Send a test event')}
${form(`/console/webhooks/${endpoint.id}/rotate`, token, [], 'Rotate the secret', 'secondary')}
${form(`/console/webhooks/${endpoint.id}/delete`, token, [], 'Delete', 'danger')}</td></tr>`)}
</tbody></table></div>`}
<h2>Add an endpoint</h2>
${endpoints.length >= WEBHOOK_ENDPOINT_LIMIT ? html`<p>You have ${endpoints.length} endpoints, the most this service allows: delete one to add another.</p>` : form('/console/webhooks', token, [
    errors.form ? notice(errors.form, 'error') : html``,
    field({ name: 'url', label: 'URL (http or https, of a public host)', type: 'url', value: values.url, error: errors.url }),
    html`<fieldset class="field${errors.events ? ' invalid' : ''}"><legend>Events</legend>${errors.events ? html`<p class="error" id="f-events-error">Error: ${errors.events}</p>` : ''}
${WEBHOOK_EVENTS.map((event) => html`<label><input type="checkbox" name="events" value="${event}"${!values.url || values.events === event ? html` checked` : ''}> ${event}</label>`)}</fieldset>`,
  ], 'Add endpoint')}`, extra.status ?? 200, who);
  }

  router.get('/webhooks', async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await endpointsPage(ctx, who);
  });
  router.post('/webhooks', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    // one box per event kind; a form sends each ticked one under the name "events"
    const parsed = endpointBody.safeParse({ url: fields.url, events: fields.events ? [fields.events] : [] });
    if (!parsed.success) return endpointsPage(ctx, who, { values: fields, errors: { ...fieldErrors(parsed.error), ...(fields.events ? {} : { events: 'Choose at least one event.' }) }, status: 422 });
    let created: Awaited<ReturnType<typeof createWebhookEndpoint>>;
    try {
      created = await createWebhookEndpoint(sql, config, who.owner, parsed.data);
    } catch (error) {
      const refused = refusal(error);
      return endpointsPage(ctx, who, { values: fields, errors: refused.errors, status: refused.status });
    }
    await endpointsPage(ctx, who, { message: shownOnce({ id: 'new-secret', heading: `The signing secret of ${created.url}`, secret: created.secret, note: SECRET_NOTE }) });
  });

  /** An action on one endpoint of the account: its SQL function, and the message once done. */
  function endpointAction<T>(action: string, run: (owner: string, id: string) => Promise<T>, done: (result: T, id: string) => Html) {
    router.post(`/webhooks/:id/${action}`, async (ctx) => {
      const posted = await signedInForm(ctx);
      if (!posted) return;
      const { who } = posted;
      const id = rowId.safeParse(ctx.params.id);
      if (!id.success) return endpointsPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
      let result: T;
      try {
        result = await run(who.owner, id.data);
      } catch (error) {
        const refused = refusal(error);
        return endpointsPage(ctx, who, { message: notice(refused.status === 404 ? GONE : Object.values(refused.errors)[0]!, 'error'), status: refused.status });
      }
      await endpointsPage(ctx, who, { message: done(result, id.data) });
    });
  }
  const one = async <T>(query: Promise<{ data: T }[]>) => (await query)[0]!.data;
  endpointAction('test', (owner, id) => sendWebhookTest(sql, owner, id),
    (_, id) => notice(html`A test event is queued, signed like any other. <a href="/console/webhooks/${id}">See it in the delivery log</a>.`));
  endpointAction('rotate', (owner, id) => one<{ url: string; secret: string }>(sql`select app.rotate_webhook_secret(${owner}, ${id}) as data`),
    (rotated) => shownOnce({ id: 'new-secret', heading: `The new signing secret of ${rotated.url}`, secret: rotated.secret, note: `The old secret signs nothing from now on. ${SECRET_NOTE}` }));
  endpointAction('enable', (owner, id) => enableWebhookEndpoint(sql, owner, id),
    () => notice('Endpoint re-enabled: new events are delivered to it again (those raised while it was disabled are not).'));
  endpointAction('delete', (owner, id) => deleteWebhookEndpoint(sql, owner, id),
    () => notice('Endpoint deleted with its delivery log; nothing more is sent to it.'));

  // ---- one endpoint's delivery log
  async function logPage(ctx: Context, who: Account, extra: { message?: Html; status?: number } = {}) {
    const id = rowId.safeParse(ctx.params.id);
    const endpoint = id.success ? await getWebhookEndpoint<Endpoint>(sql, who.owner, id.data) : null;
    if (!endpoint) return endpointsPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
    const pageNo = pageNumber(ctx.query.page);
    const { total, retention, data } = await listWebhookDeliveries<Delivery>(sql, who.owner, endpoint.id, pageNo, PER_PAGE);
    const token = csrf(ctx);
    page(ctx, 'Delivery log', html`${extra.message ?? ''}
<p>Endpoint <code>${endpoint.url}</code>: ${endpoint.status}. <a href="/console/webhooks">All endpoints</a></p>
<p>Newest first; deliveries are kept ${retention}. Each attempt shows the start of the receiver's answer (at most ${RESPONSE_EXCERPT_BYTES} bytes).</p>
${data.length === 0 ? html`<p>${total === 0 ? 'No delivery yet.' : 'No delivery on this page.'}</p>` : html`<div class="table"><table><thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Actions</th></tr></thead><tbody>
${data.map((delivery) => html`<tr><td data-label="Event">${delivery.event}${delivery.test ? ' (test)' : ''}<br><code>${delivery.event_id}</code><br>raised ${when(delivery.created_at)}</td>
<td data-label="Status"><strong>${delivery.status}</strong>${delivery.delivered_at ? html`<br>${when(delivery.delivered_at)}` : ''}${delivery.error ? html`<br>${delivery.error}` : ''}</td>
<td data-label="Attempts">${delivery.attempt_log.length === 0 ? 'none yet' : html`<ol class="attempts">${delivery.attempt_log.map((attempt) => html`<li>${when(attempt.started_at)}: ${attempt.outcome}${attempt.response_status === null ? '' : `, HTTP ${attempt.response_status}`}${attempt.error && attempt.error !== `HTTP ${attempt.response_status}` ? `, ${attempt.error}` : ''}${attempt.duration_ms === null ? '' : `, ${attempt.duration_ms} ms`}
${attempt.response_excerpt ? html`<details><summary>Answer (${[...attempt.response_excerpt].length} characters)</summary><pre class="excerpt">${attempt.response_excerpt}</pre></details>` : ''}</li>`)}</ol>`}</td>
<td class="row-actions">${delivery.status === 'pending' ? 'queued' : form(`/console/webhooks/${endpoint.id}/redeliver`, token, html`<input type="hidden" name="delivery" value="${String(delivery.id)}">`, 'Redeliver')}</td></tr>`)}
</tbody></table></div>`}
${pageNo > 1 ? html`<a href="/console/webhooks/${String(endpoint.id)}?page=${String(pageNo - 1)}">Newer</a> ` : ''}${pageNo * PER_PAGE < total ? html`<a href="/console/webhooks/${String(endpoint.id)}?page=${String(pageNo + 1)}" rel="next">Older</a>` : ''}`, extra.status ?? 200, who);
  }

  router.get('/webhooks/:id', async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await logPage(ctx, who);
  });
  router.post('/webhooks/:id/redeliver', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const [endpointId, deliveryId] = [rowId.safeParse(ctx.params.id), rowId.safeParse(fields.delivery)];
    if (!endpointId.success) return endpointsPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
    try {
      if (!deliveryId.success) return logPage(ctx, who, { message: notice('That delivery does not exist; nothing was sent.', 'error'), status: 404 });
      await sql`select app.redeliver_webhook(${who.owner}, ${endpointId.data}, ${deliveryId.data})`;
    } catch (error) {
      const refused = refusal(error);
      return logPage(ctx, who, { message: notice(Object.values(refused.errors)[0]!, 'error'), status: refused.status });
    }
    await logPage(ctx, who, { message: notice('Delivery queued again: the same event (same id), signed anew, with retries of its own.') });
  });
};
