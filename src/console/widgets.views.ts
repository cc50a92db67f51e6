// The widget pages' markup (./widgets.ts): the widget keys with their forms and the create form,
// and the builder (its GET form, the preview, the snippets).
import type { WidgetPlanName } from '../plans.ts';
import { LOCALES, RANGES, THEMES, WIDGET_NAMES, type WidgetName } from '../widget-options.ts';
import { field, form, html, notice, type Html } from './html.ts';
import { when, type Errors } from './kit.ts';

export interface WidgetKeyRow {
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

/** What the keys page shows besides the keys: a message, a refused form's values and errors (the create form's, or one key's origins). */
export interface WidgetKeysExtra {
  message?: Html;
  values?: Record<string, string>;
  errors?: Errors;
  originsError?: { key: string; value: string; error: string };
}

const WIDGET_LABELS: Record<WidgetName, string> = { ticker: 'Price ticker band', 'coin-card': 'Coin card', 'mini-chart': 'Mini chart' };
/** The frame's size in the snippets (as embed.js sizes it). */
export const SIZES: Record<WidgetName, [string, string]> = { ticker: ['100%', '48'], 'coin-card': ['320', '190'], 'mini-chart': ['480', '270'] };

/** A key's origins field, with the error of a refused edit beside it. */
const originsField = (key: WidgetKeyRow, refused?: { value: string; error: string }) =>
  html`<input type="hidden" name="key" value="${key.id}">${field({ name: 'origins', id: `origins-${key.id}`, label: 'Allowed origins', value: refused ? refused.value : key.allowed_origins.join(' '), error: refused?.error })}`;

const keyRow = (key: WidgetKeyRow, csrf: string, extra: WidgetKeysExtra) => html`<tr><td data-label="Name">${key.name}</td><td data-label="Key"><code>${key.publishable_key}</code></td><td data-label="Plan">${key.plan}</td>
<td data-label="Allowed origins">${key.allowed_origins.map((origin) => html`<code>${origin}</code> `)}</td><td data-label="Views this month">${key.views_this_month} of ${key.monthly_quota}</td><td data-label="Created">${when(key.created_at)}</td>
<td class="row-actions"><a href="/console/widgets/builder?key=${key.id}">Build a widget</a>
${form('/console/widgets/origins', csrf, originsField(key, extra.originsError?.key === key.id ? extra.originsError : undefined), 'Save origins')}
${form('/console/widgets/revoke', csrf, html`<input type="hidden" name="key" value="${key.id}">`, `Revoke ${key.prefix}`, 'danger')}</td></tr>`;

const createForm = (plans: WidgetPlanName[], csrf: string, values: Record<string, string>, errors: Errors) => form('/console/widgets', csrf, [
  field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
  field({ name: 'origins', label: 'Allowed origins (the sites that may show the widgets: https://example.com, separated by spaces or commas; http only for localhost)', value: values.origins, error: errors.origins }),
  html`<div class="field${errors.plan ? ' invalid' : ''}"><label for="f-plan">Plan</label>${errors.plan ? html`<p class="error" id="f-plan-error">Error: ${errors.plan}</p>` : ''}
<select id="f-plan" name="plan">${plans.map((plan) => html`<option${values.plan === plan ? html` selected` : ''}>${plan}</option>`)}</select></div>`,
], 'Create widget key');

/** The widget keys and the create form (or the limit reached). */
export function widgetKeysView(keys: WidgetKeyRow[], plans: WidgetPlanName[], maxKeys: number, csrf: string, extra: WidgetKeysExtra) {
  const { values = {}, errors = {} } = extra;
  return html`${extra.message ?? ''}
<p>Widget keys show live prices on your web pages (a ticker, a coin card, a mini chart). They are publishable: a widget key is in the source of every page that embeds it and only works on the sites (origins) you list. Page views count against the key's own widget plan, apart from your Data API quota.</p>
<h2>Your widget keys</h2>
${keys.length === 0 ? html`<p>No widget key yet.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Key</th><th>Plan</th><th>Allowed origins</th><th>Views this month</th><th>Created</th><th>Actions</th></tr></thead><tbody>
${keys.map((key) => keyRow(key, csrf, extra))}
</tbody></table></div>`}
<h2>Create a widget key</h2>
${keys.length >= maxKeys ? html`<p>You hold ${keys.length} widget keys, the most this service allows (${maxKeys}): revoke one to create another.</p>` : createForm(plans, csrf, values, errors)}`;
}

/** What the builder shows: the keys, the chosen key and widget, the options given and their errors. */
export interface Builder {
  keys: WidgetKeyRow[];
  key: WidgetKeyRow;
  widget: WidgetName;
  given: Record<string, string>;
  errors: Errors;
  fiats: { slug: string; name: string }[];
  /** the widget's URL on this service (null: the options are refused) and the service's base */
  url: string | null;
  base: string;
}

/** A select of the builder's GET form. */
const select = (errors: Errors, name: string, label: string, choices: readonly (string | [string, string])[], value: string) => html`<div class="field${errors[name] ? ' invalid' : ''}"><label for="b-${name}">${label}</label>${errors[name] ? html`<p class="error" id="b-${name}-error">Error: ${errors[name]}</p>` : ''}
<select id="b-${name}" name="${name}">${choices.map((choice) => {
  const [option, text] = typeof choice === 'string' ? [choice, choice] : choice;
  return html`<option value="${option}"${option === value ? html` selected` : ''}>${text}</option>`;
})}</select></div>`;

const builderForm = ({ keys, key, widget, given, errors, fiats }: Builder) => html`<form method="get" action="/console/widgets/builder">
${select(errors, 'key', 'Widget key', keys.map((one) => [one.id, `${one.name} (${one.prefix}…)`]), key.id)}
${select(errors, 'widget', 'Widget', WIDGET_NAMES.map((name) => [name, WIDGET_LABELS[name]]), widget)}
${widget === 'ticker'
    ? field({ name: 'coins', id: 'b-coins', label: 'Coins (slugs, comma-separated, up to 10)', value: given.coins, error: errors.coins, coins: 'many' })
    : field({ name: 'coin', id: 'b-coin', label: 'Coin (slug, such as bitcoin)', value: given.coin, error: errors.coin, coins: 'one' })}
${widget === 'mini-chart' ? select(errors, 'range', 'Period', RANGES, given.range!) : ''}
${select(errors, 'theme', 'Theme', THEMES, given.theme!)}
${select(errors, 'currency', 'Currency', fiats.map((fiat) => [fiat.slug, `${fiat.slug.toUpperCase()} · ${fiat.name}`]), given.currency!)}
${select(errors, 'locale', 'Number format (locale)', LOCALES, given.locale!)}
<button type="submit">Update preview</button></form>`;

/** The preview (the widget itself in an iframe) and the two snippets to copy. */
function preview({ key, widget, given, base }: Builder, url: string) {
  const [width, height] = SIZES[widget];
  const iframe = `<iframe src="${url.replaceAll('&', '&amp;')}" title="Cryptocurrency price widget" width="${width}" height="${height}" referrerpolicy="origin" loading="lazy" style="border:0;max-width:100%"></iframe>`;
  const dataAttributes = Object.entries(given).map(([name, value]) => ` data-${name}="${value}"`).join('');
  const script = `<div data-market-widget="${widget}" data-key="${key.publishable_key}"${dataAttributes}></div>\n<script src="${base}/widgets/embed.js" async></script>`;
  return html`<h2>Preview</h2>
<p>The widget as your pages will show it (this preview counts as page views).</p>
<iframe id="preview" src="${url}" title="Widget preview" width="${width}" height="${height}" referrerpolicy="origin"></iframe>
<h2>Embed it</h2>
<p>As an iframe:</p>
<pre><code id="snippet-iframe">${iframe}</code></pre> <button type="button" class="secondary" data-copy="snippet-iframe" hidden>Copy</button>
<p>Or with the script loader, which inserts that iframe where the <code>div</code> is:</p>
<pre><code id="snippet-script">${script}</code></pre> <button type="button" class="secondary" data-copy="snippet-script" hidden>Copy</button>
<p>It works on ${key.allowed_origins.map((origin) => html`<code>${origin}</code> `)}only: <a href="/console/widgets">edit the origins</a>.</p>`;
}

/** The builder: its form, then the preview and snippets, or what to fix. */
export const builderView = (builder: Builder) => html`${builderForm(builder)}
${builder.url ? preview(builder, builder.url) : notice('Fix the options above to see the preview.', 'error')}`;

export const noKeyView = () => html`${notice('Create a widget key first: the builder writes the snippet with it.')}<p><a href="/console/widgets">Widget keys</a></p>`;
