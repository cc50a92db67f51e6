// The usage page's markup (./usage.ts): the key picker, the quota of each key, the 30 days (chart
// and table), responses per endpoint and status class, 429 refusals.
import { STATUS_CLASSES } from '../http/admission-batch.ts';
import { html, notice } from './html.ts';
import { when } from './kit.ts';

export interface QuotaRow {
  id: string;
  name: string | null;
  prefix: string;
  plan: string;
  quota_limit: string;
  quota_used: string;
  quota_remaining: string;
  quota_reset: Date;
}

/** Responses in all and by status class (app.console_usage_days, app.console_usage_endpoints): classes without any are left out. */
export interface ClassCounts {
  requests: string;
  by_class: Partial<Record<(typeof CLASSES)[number], number>>;
}
export type DayRow = ClassCounts & { day: string };
export type EndpointRow = ClassCounts & { endpoint: string };

/** as app.usage_daily counts them */
const CLASSES = STATUS_CLASSES;
const byClass = (row: ClassCounts) => CLASSES.map((name) => row.by_class[name] ?? 0);

/** The CSV download's columns, in order. */
export const CSV_COLUMNS = ['day', 'endpoint', 'status_class', 'requests'] as const;

/** What the page shows: the account's keys, the one chosen (null: all), and their counts. */
export interface Usage {
  keys: QuotaRow[];
  key: QuotaRow | null;
  days: DayRow[];
  endpoints: EndpointRow[];
  refusals: { this_month: string; last_30_days: string } | undefined;
}

export const usageTitle = (key: QuotaRow | null) => (key ? `Usage of ${label(key)}` : 'Usage');

export const unknownKeyView = () => html`${notice('You have no working key with this id (revoked, or never yours?).', 'error')}
<p><a href="/console/usage">See the usage of all your keys</a>.</p>`;

const quotaTable = (shown: QuotaRow[]) => (shown.length === 0 ? html`<p>No working key: <a href="/console/keys">create one</a>.</p>` : html`<div class="table"><table><thead><tr><th>Key</th><th>Plan</th><th>Used</th><th>Remaining</th><th>Limit</th><th>Resets</th></tr></thead><tbody>
${shown.map((row) => html`<tr data-key="${row.id}"><td data-label="Key">${row.name ?? '(no name)'} <code>${row.prefix}</code></td><td data-label="Plan">${row.plan}</td><td data-label="Used" class="quota-used">${row.quota_used}</td><td data-label="Remaining" class="quota-remaining">${row.quota_remaining}</td><td data-label="Limit" class="quota-limit">${row.quota_limit}</td><td data-label="Resets"><time class="quota-reset" datetime="${row.quota_reset.toISOString()}">${when(row.quota_reset)}</time></td></tr>`)}
</tbody></table></div>`);

const endpointTable = (endpoints: EndpointRow[]) => (endpoints.length === 0 ? html`<p>No request this month.</p>` : html`<div class="table"><table id="endpoints"><thead><tr><th>Endpoint</th><th>All</th>${CLASSES.map((name) => html`<th>${name}</th>`)}</tr></thead><tbody>
${endpoints.map((row) => html`<tr><td data-label="Endpoint"><code>${row.endpoint}</code></td><td data-label="All">${row.requests}</td>${byClass(row).map((n, i) => html`<td data-label="${CLASSES[i]}">${n}</td>`)}</tr>`)}
</tbody></table></div>`);

/** The usage of the chosen key, or of all the account's keys. */
export function usageView({ keys, key, days, endpoints, refusals }: Usage) {
  const query = key ? `?key=${key.id}` : '';
  return html`${picker(keys, key?.id ?? null)}
<h2>Quota this month</h2>
${quotaTable(key ? [key] : keys)}
<p id="refusals">Refused with 429 (per-minute rate limit or monthly quota): <strong>${refusals?.this_month ?? '0'}</strong> this month, <strong>${refusals?.last_30_days ?? '0'}</strong> in the last 30 days.</p>
<h2>Requests per day, last 30 days</h2>
${dailyChart(days)}
<h2>Requests per endpoint this month</h2>
${endpointTable(endpoints)}
<p><a href="/console/usage.csv${query}" download>Download these counts as CSV</a> (${CSV_COLUMNS.join(', ')}: one row per UTC day, endpoint and status class, from this month's first day or 29 days ago, whichever is earlier).</p>
<p>Counted when each response is written, to within a second; days and months are UTC.</p>`;
}

const label = (key: QuotaRow) => `${key.name ?? '(no name)'} (${key.prefix})`;

/** The key picker: a plain GET form (works without script). */
const picker = (keys: QuotaRow[], selected: string | null) => html`<form method="get" action="/console/usage" class="picker"><div class="field"><label for="f-key">Keys</label>
<select id="f-key" name="key"><option value=""${selected === null ? html` selected` : ''}>All keys of the account</option>
${keys.map((key) => html`<option value="${key.id}"${key.id === selected ? html` selected` : ''}>${label(key)}</option>`)}</select></div><button type="submit" class="secondary">Show</button></form>`;

/**
 * The 30 days as a table (the numbers, without script) and, for usage-chart.js, the same series in
 * data attributes under an image role whose name summarises them.
 */
function dailyChart(days: DayRow[]) {
  const total = days.reduce((sum, row) => sum + Number(row.requests), 0);
  const peak = days.reduce<(typeof days)[number] | null>((most, row) => (most === null || Number(row.requests) > Number(most.requests) ? row : most), null);
  const summary = total === 0 || !peak
    ? 'Requests per day over the last 30 days: none.'
    : `Requests per day over the last 30 days: ${total} in all, most on ${peak.day} (${peak.requests}). The table below has each day's numbers.`;
  const series = Object.fromEntries(CLASSES.map((name) => [name, days.map((row) => row.by_class[name] ?? 0)]));
  return html`<figure class="usage-chart"><div id="usage-chart" role="img" aria-label="${summary}" data-days="${JSON.stringify(days.map((row) => row.day))}" data-series="${JSON.stringify(series)}"></div>
<figcaption>${summary}</figcaption></figure>
<details id="usage-days" open><summary>Requests per day (table)</summary><div class="table"><table><thead><tr><th>Day (UTC)</th><th>All</th>${CLASSES.map((name) => html`<th>${name}</th>`)}</tr></thead><tbody>
${days.map((row) => html`<tr><td data-label="Day">${row.day}</td><td data-label="All">${row.requests}</td>${byClass(row).map((n, i) => html`<td data-label="${CLASSES[i]}">${n}</td>`)}</tr>`)}
</tbody></table></div></details>`;
}

