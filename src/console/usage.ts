// The usage of the account's Data API keys, all of them or one (?key=<id>): this month's quota per
// key (the figures of the X-Quota-* headers), responses per day over the last 30 days (a chart drawn
// by uPlot, served by this service, over a table of the same numbers that works without script),
// responses per endpoint and status class this month, 429 refusals, and the rows as CSV. Counted by
// the admission flush into app.usage_daily; read by sql/functions/910_console_usage.sql. UTC days.
// Markup in ./usage.views.ts.
import type { Context } from 'koa';
import { navigation } from './html.ts';
import { rowId, type Account, type Kit, type PageGroup } from './kit.ts';
import { CSV_COLUMNS, unknownKeyView, usageTitle, usageView, type DayRow, type EndpointRow, type QuotaRow } from './usage.views.ts';

export const usagePages: PageGroup = (routes, kit) => {
  navigation('/console/usage', 'Usage');
  routes.signedIn.get('/usage', (ctx, who) => usagePage(kit, ctx, who));
  routes.signedIn.get('/usage.csv', (ctx, who) => usageCsv(kit, ctx, who));
};

/**
 * The account's working keys and the one asked for (null: the whole account); undefined when
 * ?key= names no working key of the account (the 404 page is written).
 */
async function selection({ sql, page }: Kit, ctx: Context, who: Account): Promise<{ keys: QuotaRow[]; key: QuotaRow | null } | undefined> {
  const keys = await sql<QuotaRow[]>`select * from app.console_usage_quota(${who.owner})`;
  const asked = ctx.query.key;
  if (asked === undefined || asked === '') return { keys, key: null };
  const id = rowId.safeParse(asked);
  const key = id.success ? keys.find((one) => one.id === id.data) : undefined;
  if (key) return { keys, key };
  page(ctx, 'Unknown key', unknownKeyView(), 404, who);
  return undefined;
}

async function usagePage(kit: Kit, ctx: Context, who: Account) {
  const chosen = await selection(kit, ctx, who);
  if (!chosen) return;
  const { sql } = kit;
  const keyId = chosen.key?.id ?? null;
  const [days, endpoints, [refusals]] = await Promise.all([
    sql<DayRow[]>`select day::text, requests, by_class from app.console_usage_days(${who.owner}, ${keyId})`,
    sql<EndpointRow[]>`select * from app.console_usage_endpoints(${who.owner}, ${keyId})`,
    sql<{ this_month: string; last_30_days: string }[]>`select * from app.console_usage_refusals(${who.owner}, ${keyId})`,
  ]);
  kit.page(ctx, usageTitle(chosen.key), usageView({ ...chosen, days, endpoints, refusals }), 200, who, { scripts: ['usage-chart.js'], styles: ['uplot.min.css'] });
}

async function usageCsv(kit: Kit, ctx: Context, who: Account) {
  const chosen = await selection(kit, ctx, who);
  if (!chosen) return;
  const keyId = chosen.key?.id ?? null;
  const rows = await kit.sql<{ day: string; endpoint: string; status_class: string; requests: string }[]>`
    select day::text, endpoint, status_class, requests from app.console_usage_rows(${who.owner}, ${keyId})`;
  ctx.type = 'text/csv; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Disposition', `attachment; filename="usage-${keyId ? `key-${keyId}` : 'account'}-${new Date().toISOString().slice(0, 10)}.csv"`);
  ctx.body = csv([[...CSV_COLUMNS], ...rows.map((row) => CSV_COLUMNS.map((column) => row[column]))]);
}

/** RFC 4180 CSV: fields with a quote, comma or line break quoted (quotes doubled), CRLF line ends. */
export function csv(rows: readonly (readonly string[])[]): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return rows.map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}
