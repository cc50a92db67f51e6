// The account's widget keys (publishable, for the embeddable widgets at /widgets): create (name,
// allowed origins, a self-service widget plan), list with this month's page views, edit origins,
// revoke; and the widget builder: a widget and its options, a live preview (the widget itself in
// an iframe) and the snippets to copy (iframe and embed.js). At most CONSOLE_MAX_KEYS live widget keys.
import type { Context } from 'koa';
import { z } from 'zod';
import { publicBase } from '../http/pages.ts';
import { firstValues } from '../http/validation.ts';
import type { WidgetPlanName } from '../plans.ts';
import { createWidgetKey } from '../keys.ts';
import { canonicalOrigin, LOCALES, RANGES, THEMES, WIDGET_NAMES, widgetOptions, type WidgetName } from '../widget-options.ts';
import { field, form, html, navigation, notice, type Html } from './html.ts';
import { fieldErrors, rowId, when, type Account, type Errors, type PageGroup } from './kit.ts';

interface WidgetKeyRow {
  id: string;
  name: string;
  prefix: string;
  publishable_key: string;
  plan: string;
  allowed_origins: string[];
  created_at: Date;
  last_used_at: Date | null;
  views_this_month: string;
  monthly_quota: string;
}

const keyName = z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.');

/** Origins typed one after another (spaces, commas or new lines between): each canonical, 1 to 20, each once. */
export const originList = z.string().transform((text, ctx) => {
  const given = text.split(/[\s,]+/).filter(Boolean);
  if (given.length === 0) ctx.addIssue({ code: 'custom', message: 'List at least one origin, such as https://example.com.' });
  if (given.length > 20) ctx.addIssue({ code: 'custom', message: 'List at most 20 origins.' });
  const origins: string[] = [];
  for (const item of given) {
    const checked = canonicalOrigin(item);
    if ('error' in checked) ctx.addIssue({ code: 'custom', message: checked.error });
    else if (!origins.includes(checked.origin)) origins.push(checked.origin);
  }
  return origins;
});

const GONE = 'That widget key is gone (revoked in another tab?); nothing was changed.';

export const widgetPages: PageGroup = (router, { sql, config, csrf, page, signedIn, signedInForm }) => {
  navigation('/console/widgets', 'Widgets');
  const plans = config.CONSOLE_WIDGET_PLANS as [WidgetPlanName, ...WidgetPlanName[]];
  const createForm = z.object({ name: keyName, origins: originList, plan: z.enum(plans, `Choose one of: ${plans.join(', ')}.`) });

  const keysOf = (owner: string) => sql<WidgetKeyRow[]>`select * from app.console_widget_keys(${owner})`;

  async function keysPage(ctx: Context, who: Account, extra: { message?: Html; values?: Record<string, string>; errors?: Errors; originsError?: { key: string; value: string; error: string }; status?: number } = {}) {
    const keys = await keysOf(who.owner);
    const token = csrf(ctx);
    const { values = {}, errors = {} } = extra;
    page(ctx, 'Widget keys', html`${extra.message ?? ''}
<p>Widget keys show live prices on your web pages (a ticker, a coin card, a mini chart). They are publishable: a widget key is in the source of every page that embeds it and only works on the sites (origins) you list. Page views count against the key's own widget plan, apart from your Data API quota.</p>
<h2>Your widget keys</h2>
${keys.length === 0 ? html`<p>No widget key yet.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Key</th><th>Plan</th><th>Allowed origins</th><th>Views this month</th><th>Created</th><th>Actions</th></tr></thead><tbody>
${keys.map((key) => html`<tr><td data-label="Name">${key.name}</td><td data-label="Key"><code>${key.publishable_key}</code></td><td data-label="Plan">${key.plan}</td>
<td data-label="Allowed origins">${key.allowed_origins.map((origin) => html`<code>${origin}</code> `)}</td><td data-label="Views this month">${key.views_this_month} of ${key.monthly_quota}</td><td data-label="Created">${when(key.created_at)}</td>
<td class="row-actions"><a href="/console/widgets/builder?key=${key.id}">Build a widget</a>
${form('/console/widgets/origins', token, originsField(key, extra.originsError?.key === key.id ? extra.originsError : undefined), 'Save origins')}
${form('/console/widgets/revoke', token, html`<input type="hidden" name="key" value="${key.id}">`, `Revoke ${key.prefix}`, 'danger')}</td></tr>`)}
</tbody></table></div>`}
<h2>Create a widget key</h2>
${keys.length >= config.CONSOLE_MAX_KEYS ? html`<p>You hold ${keys.length} widget keys, the most this service allows (${config.CONSOLE_MAX_KEYS}): revoke one to create another.</p>` : form('/console/widgets', token, [
    field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
    field({ name: 'origins', label: 'Allowed origins (the sites that may show the widgets: https://example.com, separated by spaces or commas; http only for localhost)', value: values.origins, error: errors.origins }),
    html`<div class="field${errors.plan ? ' invalid' : ''}"><label for="f-plan">Plan</label>${errors.plan ? html`<p class="error" id="f-plan-error">Error: ${errors.plan}</p>` : ''}
<select id="f-plan" name="plan">${plans.map((plan) => html`<option${values.plan === plan ? html` selected` : ''}>${plan}</option>`)}</select></div>`,
  ], 'Create widget key')}`, extra.status ?? 200, who);
  }

  router.get('/widgets', async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await keysPage(ctx, who);
  });
  router.post('/widgets', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const parsed = createForm.safeParse(fields);
    if (!parsed.success) return keysPage(ctx, who, { values: fields, errors: fieldErrors(parsed.error), status: 422 });
    const created = await sql.begin(async (tx) => {
      // one creation at a time per account, so two tabs cannot pass the limit together
      await tx`select 1 from app.owners where owner = ${who.owner} for update`;
      const [count] = await tx<{ n: number }[]>`select count(*)::int as n from app.console_widget_keys(${who.owner})`;
      if (count!.n >= config.CONSOLE_MAX_KEYS) return null;
      return createWidgetKey(tx as never, { owner: who.owner, plan: parsed.data.plan, name: parsed.data.name, origins: parsed.data.origins });
    });
    if (!created) return keysPage(ctx, who, { values: fields, errors: { name: `You hold the most widget keys allowed (${config.CONSOLE_MAX_KEYS}).` }, status: 409 });
    await keysPage(ctx, who, { message: notice(html`Widget key created: <code>${created.key}</code>. <a href="/console/widgets/builder?key=${created.id}">Build a widget with it</a>.`) });
  });
  router.post('/widgets/origins', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const id = rowId.safeParse(fields.key);
    if (!id.success) return keysPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
    const origins = originList.safeParse(fields.origins ?? '');
    if (!origins.success) return keysPage(ctx, who, { originsError: { key: id.data, value: fields.origins ?? '', error: fieldErrors(origins.error).form ?? origins.error.issues[0]!.message }, status: 422 });
    const [row] = await sql<{ ok: boolean }[]>`select app.console_set_widget_origins(${who.owner}, ${id.data}, ${origins.data}::text[]) as ok`;
    await keysPage(ctx, who, row!.ok ? { message: notice('Origins saved: widgets follow them within a second.') } : { message: notice(GONE, 'error'), status: 404 });
  });
  router.post('/widgets/revoke', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const id = rowId.safeParse(fields.key);
    const [row] = id.success ? await sql<{ ok: boolean }[]>`select app.console_revoke_widget_key(${who.owner}, ${id.data}) as ok` : [{ ok: false }];
    await keysPage(ctx, who, row!.ok ? { message: notice('Widget key revoked: every widget using it goes blank within a second.') } : { message: notice(GONE, 'error'), status: 404 });
  });

  // ---- The builder: a GET form (nothing changes), the preview and the snippets for its options.
  router.get('/widgets/builder', async (ctx) => {
    const who = await signedIn(ctx);
    if (!who) return;
    const keys = await keysOf(who.owner);
    const query = firstValues(ctx.query);
    const key = keys.find((one) => one.id === query.key) ?? keys[0];
    if (!key) {
      return page(ctx, 'Widget builder', html`${notice('Create a widget key first: the builder writes the snippet with it.')}<p><a href="/console/widgets">Widget keys</a></p>`, 200, who);
    }
    const widget: WidgetName = (WIDGET_NAMES as readonly string[]).includes(query.widget ?? '') ? (query.widget as WidgetName) : 'coin-card';
    const given: Record<string, string> = {
      theme: query.theme || 'light', currency: query.currency || 'usd', locale: query.locale || 'en',
      ...(widget === 'ticker' ? { coins: query.coins || 'bitcoin,ethereum,solana' } : { coin: query.coin || 'bitcoin' }),
      ...(widget === 'mini-chart' ? { range: query.range || '7d' } : {}),
    };
    const parsed = widgetOptions(widget).safeParse(given);
    const errors = parsed.success ? {} : fieldErrors(parsed.error);
    const fiats = await sql<{ slug: string; name: string }[]>`select slug, name from api.fiats()`;
    const base = publicBase(ctx, config);
    const params = new URLSearchParams({ key: key.publishable_key, ...given });
    const url = `${base}/widgets/${widget}?${params}`;
    const [width, height] = SIZES[widget];
    const iframe = `<iframe src="${url.replaceAll('&', '&amp;')}" title="Cryptocurrency price widget" width="${width}" height="${height}" referrerpolicy="origin" loading="lazy" style="border:0;max-width:100%"></iframe>`;
    const dataAttributes = Object.entries(given).map(([name, value]) => ` data-${name}="${value}"`).join('');
    const script = `<div data-market-widget="${widget}" data-key="${key.publishable_key}"${dataAttributes}></div>\n<script src="${base}/widgets/embed.js" async></script>`;
    const select = (name: string, label: string, choices: readonly (string | [string, string])[], value: string) => html`<div class="field${errors[name] ? ' invalid' : ''}"><label for="b-${name}">${label}</label>${errors[name] ? html`<p class="error" id="b-${name}-error">Error: ${errors[name]}</p>` : ''}
<select id="b-${name}" name="${name}">${choices.map((choice) => {
      const [option, text] = typeof choice === 'string' ? [choice, choice] : choice;
      return html`<option value="${option}"${option === value ? html` selected` : ''}>${text}</option>`;
    })}</select></div>`;
    page(ctx, 'Widget builder', html`<form method="get" action="/console/widgets/builder">
${select('key', 'Widget key', keys.map((one) => [one.id, `${one.name} (${one.prefix}…)`]), key.id)}
${select('widget', 'Widget', WIDGET_NAMES.map((name) => [name, WIDGET_LABELS[name]]), widget)}
${widget === 'ticker'
    ? field({ name: 'coins', id: 'b-coins', label: 'Coins (slugs, comma-separated, up to 10)', value: given.coins, error: errors.coins })
    : field({ name: 'coin', id: 'b-coin', label: 'Coin (slug, such as bitcoin)', value: given.coin, error: errors.coin })}
${widget === 'mini-chart' ? select('range', 'Period', RANGES, given.range!) : ''}
${select('theme', 'Theme', THEMES, given.theme!)}
${select('currency', 'Currency', fiats.map((fiat) => [fiat.slug, `${fiat.slug.toUpperCase()} · ${fiat.name}`]), given.currency!)}
${select('locale', 'Number format (locale)', LOCALES, given.locale!)}
<button type="submit">Update preview</button></form>
${parsed.success ? html`<h2>Preview</h2>
<p>The widget as your pages will show it (this preview counts as page views).</p>
<iframe id="preview" src="${url}" title="Widget preview" width="${width}" height="${height}" referrerpolicy="origin"></iframe>
<h2>Embed it</h2>
<p>As an iframe:</p>
<pre><code id="snippet-iframe">${iframe}</code></pre> <button type="button" class="secondary" data-copy="snippet-iframe" hidden>Copy</button>
<p>Or with the script loader, which inserts that iframe where the <code>div</code> is:</p>
<pre><code id="snippet-script">${script}</code></pre> <button type="button" class="secondary" data-copy="snippet-script" hidden>Copy</button>
<p>It works on ${key.allowed_origins.map((origin) => html`<code>${origin}</code> `)}only: <a href="/console/widgets">edit the origins</a>.</p>` : notice('Fix the options above to see the preview.', 'error')}`, parsed.success ? 200 : 422, who);
    // the preview is the widget itself, from this origin: the one page of the console that frames
    ctx.set('Content-Security-Policy', `${ctx.response.get('Content-Security-Policy')}; frame-src 'self'`);
  });
};

const WIDGET_LABELS: Record<WidgetName, string> = { ticker: 'Price ticker band', 'coin-card': 'Coin card', 'mini-chart': 'Mini chart' };
/** The frame's size in the snippets (as embed.js sizes it). */
const SIZES: Record<WidgetName, [string, string]> = { ticker: ['100%', '48'], 'coin-card': ['320', '190'], 'mini-chart': ['480', '270'] };

/** A key's origins field, with the error of a refused edit beside it. */
const originsField = (key: WidgetKeyRow, refused?: { value: string; error: string }) =>
  html`<input type="hidden" name="key" value="${key.id}">${field({ name: 'origins', id: `origins-${key.id}`, label: 'Allowed origins', value: refused ? refused.value : key.allowed_origins.join(' '), error: refused?.error })}`;
