// The usage of the account's Data API keys, all of them or one (?key=<id>): this month's quota per
// key (the figures of the X-Quota-* headers), responses per day over the last 30 days (a chart drawn
// by uPlot, served by this service, over a table of the same numbers that works without script),
// responses per endpoint and status class this month, 429 refusals, and the rows as CSV. Counted by
// the admission flush into app.usage_daily; read by sql/functions/910_console_usage.sql. UTC days.
import type { Context } from 'koa';
import { STATUS_CLASSES } from '../http/admission-batch.ts';
import { html, navigation, notice } from './html.ts';
import { rowId, when, type Account, type PageGroup } from './kit.ts';

interface QuotaRow {
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
interface ClassCounts {
  requests: string;
  by_class: Partial<Record<(typeof CLASSES)[number], number>>;
}

/** as app.usage_daily counts them */
const CLASSES = STATUS_CLASSES;
const byClass = (row: ClassCounts) => CLASSES.map((name) => row.by_class[name] ?? 0);

/** The CSV download's columns, in order. */
export const CSV_COLUMNS = ['day', 'endpoint', 'status_class', 'requests'] as const;

export const usagePages: PageGroup = (router, { sql, page, signedIn }) => {
  navigation('/console/usage', 'Usage');

  /**
   * The account's working keys and the one asked for (null: the whole account); undefined when
   * ?key= names no working key of the account (the 404 page is written).
   */
  async function selection(ctx: Context, who: Account): Promise<{ keys: QuotaRow[]; key: QuotaRow | null } | undefined> {
    const keys = await sql<QuotaRow[]>`select * from app.console_usage_quota(${who.owner})`;
    const asked = ctx.query.key;
    if (asked === undefined || asked === '') return { keys, key: null };
    const id = rowId.safeParse(asked);
    const key = id.success ? keys.find((one) => one.id === id.data) : undefined;
    if (key) return { keys, key };
    page(ctx, 'Unknown key', html`${notice('You have no working key with this id (revoked, or never yours?).', 'error')}
<p><a href="/console/usage">See the usage of all your keys</a>.</p>`, 404, who);
    return undefined;
  }

  router.get('/usage', async (ctx) => {
    const who = await signedIn(ctx);
    const chosen = who ? await selection(ctx, who) : undefined;
    if (!who || !chosen) return;
    const { keys, key } = chosen;
    const keyId = key?.id ?? null;
    const [days, endpoints, [refusals]] = await Promise.all([
      sql<(ClassCounts & { day: string })[]>`select day::text, requests, by_class from app.console_usage_days(${who.owner}, ${keyId})`,
      sql<(ClassCounts & { endpoint: string })[]>`select * from app.console_usage_endpoints(${who.owner}, ${keyId})`,
      sql<{ this_month: string; last_30_days: string }[]>`select * from app.console_usage_refusals(${who.owner}, ${keyId})`,
    ]);
    const shown = key ? [key] : keys;
    const query = keyId ? `?key=${keyId}` : '';
    page(ctx, key ? `Usage of ${label(key)}` : 'Usage', html`${picker(keys, keyId)}
<h2>Quota this month</h2>
${shown.length === 0 ? html`<p>No working key: <a href="/console/keys">create one</a>.</p>` : html`<div class="table"><table><thead><tr><th>Key</th><th>Plan</th><th>Used</th><th>Remaining</th><th>Limit</th><th>Resets</th></tr></thead><tbody>
${shown.map((row) => html`<tr data-key="${row.id}"><td data-label="Key">${row.name ?? '(no name)'} <code>${row.prefix}</code></td><td data-label="Plan">${row.plan}</td><td data-label="Used" class="quota-used">${row.quota_used}</td><td data-label="Remaining" class="quota-remaining">${row.quota_remaining}</td><td data-label="Limit" class="quota-limit">${row.quota_limit}</td><td data-label="Resets"><time class="quota-reset" datetime="${row.quota_reset.toISOString()}">${when(row.quota_reset)}</time></td></tr>`)}
</tbody></table></div>`}
<p id="refusals">Refused with 429 (per-minute rate limit or monthly quota): <strong>${refusals?.this_month ?? '0'}</strong> this month, <strong>${refusals?.last_30_days ?? '0'}</strong> in the last 30 days.</p>
<h2>Requests per day, last 30 days</h2>
${dailyChart(days)}
<h2>Requests per endpoint this month</h2>
${endpoints.length === 0 ? html`<p>No request this month.</p>` : html`<div class="table"><table id="endpoints"><thead><tr><th>Endpoint</th><th>All</th>${CLASSES.map((name) => html`<th>${name}</th>`)}</tr></thead><tbody>
${endpoints.map((row) => html`<tr><td data-label="Endpoint"><code>${row.endpoint}</code></td><td data-label="All">${row.requests}</td>${byClass(row).map((n, i) => html`<td data-label="${CLASSES[i]}">${n}</td>`)}</tr>`)}
</tbody></table></div>`}
<p><a href="/console/usage.csv${query}" download>Download these counts as CSV</a> (${CSV_COLUMNS.join(', ')}: one row per UTC day, endpoint and status class, from this month's first day or 29 days ago, whichever is earlier).</p>
<p>Counted when each response is written, to within a second; days and months are UTC.</p>`, 200, who, { scripts: ['usage-chart.js'], styles: ['uplot.min.css'] });
  });

  router.get('/usage.csv', async (ctx) => {
    const who = await signedIn(ctx);
    const chosen = who ? await selection(ctx, who) : undefined;
    if (!who || !chosen) return;
    const keyId = chosen.key?.id ?? null;
    const rows = await sql<{ day: string; endpoint: string; status_class: string; requests: string }[]>`
      select day::text, endpoint, status_class, requests from app.console_usage_rows(${who.owner}, ${keyId})`;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Content-Disposition', `attachment; filename="usage-${keyId ? `key-${keyId}` : 'account'}-${new Date().toISOString().slice(0, 10)}.csv"`);
    ctx.body = csv([[...CSV_COLUMNS], ...rows.map((row) => CSV_COLUMNS.map((column) => row[column]))]);
  });
};

const label = (key: QuotaRow) => `${key.name ?? '(no name)'} (${key.prefix})`;

/** The key picker: a plain GET form (works without script). */
const picker = (keys: QuotaRow[], selected: string | null) => html`<form method="get" action="/console/usage" class="picker"><div class="field"><label for="f-key">Keys</label>
<select id="f-key" name="key"><option value=""${selected === null ? html` selected` : ''}>All keys of the account</option>
${keys.map((key) => html`<option value="${key.id}"${key.id === selected ? html` selected` : ''}>${label(key)}</option>`)}</select></div><button type="submit" class="secondary">Show</button></form>`;

/**
 * The 30 days as a table (the numbers, without script) and, for usage-chart.js, the same series in
 * data attributes under an image role whose name summarises them.
 */
function dailyChart(days: (ClassCounts & { day: string })[]) {
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

/** RFC 4180 CSV: fields with a quote, comma or line break quoted (quotes doubled), CRLF line ends. */
export function csv(rows: readonly (readonly string[])[]): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return rows.map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}
