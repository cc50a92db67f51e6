// The webhook pages' markup (./webhooks.ts): the endpoints with their forms and the add form, and
// one endpoint's delivery log.
import { WEBHOOK_ENDPOINT_LIMIT, WEBHOOK_EVENTS } from '../webhooks/endpoints.ts';
import { RESPONSE_EXCERPT_BYTES } from '../webhooks/post.ts';
import { field, form, html, notice, type Html } from './html.ts';
import { when, type Errors, type Fields } from './kit.ts';

export const PER_PAGE = 20;

/** app.webhook_endpoint_json */
export interface Endpoint {
  id: number;
  url: string;
  events: string[];
  status: 'delivering' | 'disabled';
  consecutive_failures: number;
  disabled_at: string | null;
  created_at: string;
}

/** One delivery of app.list_webhook_deliveries. */
export interface Delivery {
  id: number;
  event: string;
  event_id: string;
  test: boolean;
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  error: string | null;
  attempts: number;
  delivered_at: string | null;
  created_at: string;
  attempt_log: Attempt[];
}
type Attempt = { started_at: string; outcome: string; response_status: number | null; duration_ms: number | null; error: string | null; response_excerpt: string | null };

/** A page of app.list_webhook_deliveries. */
export interface DeliveryLog { total: number; retention: string; data: Delivery[] }

const endpointStatus = (endpoint: Endpoint) => (endpoint.status === 'delivering'
  ? `delivering${endpoint.consecutive_failures ? ` (${endpoint.consecutive_failures} failed in a row)` : ''}`
  : html`<strong>disabled</strong> ${when(endpoint.disabled_at!)} after ${endpoint.consecutive_failures} failed deliveries in a row`);

const endpointRow = (endpoint: Endpoint, csrf: string) => html`<tr><td data-label="URL"><code>${endpoint.url}</code></td><td data-label="Events">${endpoint.events.join(', ')}</td>
<td data-label="Status">${endpointStatus(endpoint)}</td>
<td data-label="Created">${when(endpoint.created_at)}</td>
<td class="row-actions"><a href="/console/webhooks/${String(endpoint.id)}">Delivery log</a>
${endpoint.status === 'disabled' ? form(`/console/webhooks/${endpoint.id}/enable`, csrf, [], 'Re-enable') : form(`/console/webhooks/${endpoint.id}/test`, csrf, [], 'Send a test event')}
${form(`/console/webhooks/${endpoint.id}/rotate`, csrf, [], 'Rotate the secret', 'secondary')}
${form(`/console/webhooks/${endpoint.id}/delete`, csrf, [], 'Delete', 'danger')}</td></tr>`;

const addForm = (csrf: string, values: Fields, errors: Errors) => form('/console/webhooks', csrf, [
  errors.form ? notice(errors.form, 'error') : html``,
  field({ name: 'url', label: 'URL (http or https, of a public host)', type: 'url', value: values.url, error: errors.url }),
  html`<fieldset class="field${errors.events ? ' invalid' : ''}"><legend>Events</legend>${errors.events ? html`<p class="error" id="f-events-error">Error: ${errors.events}</p>` : ''}
${WEBHOOK_EVENTS.map((event) => html`<label><input type="checkbox" name="events" value="${event}"${!values.url || values.events === event ? html` checked` : ''}> ${event}</label>`)}</fieldset>`,
], 'Add endpoint');

/** The endpoints and the add form (or the limit reached); `values` and `errors`: a refused add's. */
export const endpointsView = (endpoints: Endpoint[], csrf: string, { message, values = {}, errors = {} }: { message?: Html; values?: Fields; errors?: Errors }) => html`${message ?? ''}
<h2>Your endpoints</h2>
${endpoints.length === 0 ? html`<p>No endpoint yet.</p>` : html`<div class="table"><table><thead><tr><th>URL</th><th>Events</th><th>Status</th><th>Created</th><th>Actions</th></tr></thead><tbody>
${endpoints.map((endpoint) => endpointRow(endpoint, csrf))}
</tbody></table></div>`}
<h2>Add an endpoint</h2>
${endpoints.length >= WEBHOOK_ENDPOINT_LIMIT ? html`<p>You have ${endpoints.length} endpoints, the most this service allows: delete one to add another.</p>` : addForm(csrf, values, errors)}`;

const attemptItem = (attempt: Attempt) => html`<li>${when(attempt.started_at)}: ${attempt.outcome}${attempt.response_status === null ? '' : `, HTTP ${attempt.response_status}`}${attempt.error && attempt.error !== `HTTP ${attempt.response_status}` ? `, ${attempt.error}` : ''}${attempt.duration_ms === null ? '' : `, ${attempt.duration_ms} ms`}
${attempt.response_excerpt ? html`<details><summary>Answer (${[...attempt.response_excerpt].length} characters)</summary><pre class="excerpt">${attempt.response_excerpt}</pre></details>` : ''}</li>`;

const deliveryRow = (endpoint: Endpoint, delivery: Delivery, csrf: string) => html`<tr><td data-label="Event">${delivery.event}${delivery.test ? ' (test)' : ''}<br><code>${delivery.event_id}</code><br>raised ${when(delivery.created_at)}</td>
<td data-label="Status"><strong>${delivery.status}</strong>${delivery.delivered_at ? html`<br>${when(delivery.delivered_at)}` : ''}${delivery.error ? html`<br>${delivery.error}` : ''}</td>
<td data-label="Attempts">${delivery.attempt_log.length === 0 ? 'none yet' : html`<ol class="attempts">${delivery.attempt_log.map(attemptItem)}</ol>`}</td>
<td class="row-actions">${delivery.status === 'pending' ? 'queued' : form(`/console/webhooks/${endpoint.id}/redeliver`, csrf, html`<input type="hidden" name="delivery" value="${String(delivery.id)}">`, 'Redeliver')}</td></tr>`;

/** One endpoint's delivery log, a page of it (newest first). */
export const logView = (endpoint: Endpoint, { total, retention, data }: DeliveryLog, pageNo: number, csrf: string, message?: Html) => html`${message ?? ''}
<p>Endpoint <code>${endpoint.url}</code>: ${endpoint.status}. <a href="/console/webhooks">All endpoints</a></p>
<p>Newest first; deliveries are kept ${retention}. Each attempt shows the start of the receiver's answer (at most ${RESPONSE_EXCERPT_BYTES} bytes).</p>
${data.length === 0 ? html`<p>${total === 0 ? 'No delivery yet.' : 'No delivery on this page.'}</p>` : html`<div class="table"><table><thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>Actions</th></tr></thead><tbody>
${data.map((delivery) => deliveryRow(endpoint, delivery, csrf))}
</tbody></table></div>`}
${pageNo > 1 ? html`<a href="/console/webhooks/${String(endpoint.id)}?page=${String(pageNo - 1)}">Newer</a> ` : ''}${pageNo * PER_PAGE < total ? html`<a href="/console/webhooks/${String(endpoint.id)}?page=${String(pageNo + 1)}" rel="next">Older</a>` : ''}`;
