// The account's widget keys (publishable, for the embeddable widgets at /widgets): create (name,
// allowed origins, a self-service widget plan), list with this month's page views, edit origins,
// revoke; and the widget builder: a widget and its options, a live preview (the widget itself in
// an iframe) and the snippets to copy (iframe and embed.js). At most CONSOLE_MAX_KEYS live widget
// keys. Markup in ./widgets.views.ts.
import type { Context } from 'koa';
import { z } from 'zod';
import { publicBase } from '../http/base.ts';
import { firstValues } from '../http/validation.ts';
import type { WidgetPlanName } from '../plans.ts';
import { createWidgetKey } from '../keys.ts';
import { canonicalOrigin, WIDGET_NAMES, widgetOptions, type WidgetName } from '../widget-options.ts';
import { html, navigation, notice } from './html.ts';
import { fieldErrors, rowId, type Account, type Fields, type Kit, type PageGroup } from './kit.ts';
import { builderView, noKeyView, widgetKeysView, type WidgetKeyRow, type WidgetKeysExtra } from './widgets.views.ts';

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

export const widgetPages: PageGroup = (routes, kit) => {
  navigation('/console/widgets', 'Widgets');
  routes.signedIn.get('/widgets', (ctx, who) => keysPage(kit, ctx, who));
  routes.signedIn.post('/widgets', (ctx, who, fields) => create(kit, ctx, who, fields));
  routes.signedIn.post('/widgets/origins', (ctx, who, fields) => saveOrigins(kit, ctx, who, fields));
  routes.signedIn.post('/widgets/revoke', (ctx, who, fields) => revoke(kit, ctx, who, fields));
  // the builder: a GET form (nothing changes), the preview and the snippets for its options
  routes.signedIn.get('/widgets/builder', (ctx, who) => builder(kit, ctx, who));
};

const plansOf = (config: Kit['config']) => config.CONSOLE_WIDGET_PLANS as [WidgetPlanName, ...WidgetPlanName[]];
const keysOf = ({ sql }: Kit, owner: string) => sql<WidgetKeyRow[]>`select * from app.console_widget_keys(${owner})`;

async function keysPage(kit: Kit, ctx: Context, who: Account, extra: WidgetKeysExtra = {}, status = 200) {
  const keys = await keysOf(kit, who.owner);
  kit.page(ctx, 'Widget keys', widgetKeysView(keys, plansOf(kit.config), kit.config.CONSOLE_MAX_KEYS, kit.csrf(ctx), extra), status, who);
}

const gonePage = (kit: Kit, ctx: Context, who: Account) => keysPage(kit, ctx, who, { message: notice(GONE, 'error') }, 404);

async function create(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  const plans = plansOf(kit.config);
  const parsed = z.object({ name: keyName, origins: originList, plan: z.enum(plans, `Choose one of: ${plans.join(', ')}.`) }).safeParse(fields);
  if (!parsed.success) return keysPage(kit, ctx, who, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const limit = kit.config.CONSOLE_MAX_KEYS;
  const created = await kit.sql.begin(async (tx) => {
    // one creation at a time per account, so two tabs cannot pass the limit together
    await tx`select 1 from app.owners where owner = ${who.owner} for update`;
    const [count] = await tx<{ n: number }[]>`select count(*)::int as n from app.console_widget_keys(${who.owner})`;
    if (count!.n >= limit) return null;
    return createWidgetKey(tx as never, { owner: who.owner, plan: parsed.data.plan, name: parsed.data.name, origins: parsed.data.origins });
  });
  if (!created) return keysPage(kit, ctx, who, { values: fields, errors: { name: `You hold the most widget keys allowed (${limit}).` } }, 409);
  await keysPage(kit, ctx, who, { message: notice(html`Widget key created: <code>${created.key}</code>. <a href="/console/widgets/builder?key=${created.id}">Build a widget with it</a>.`) });
}

async function saveOrigins(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  const id = rowId.safeParse(fields.key);
  if (!id.success) return gonePage(kit, ctx, who);
  const origins = originList.safeParse(fields.origins ?? '');
  if (!origins.success) return keysPage(kit, ctx, who, { originsError: { key: id.data, value: fields.origins ?? '', error: fieldErrors(origins.error).form ?? origins.error.issues[0]!.message } }, 422);
  const [row] = await kit.sql<{ ok: boolean }[]>`select app.console_set_widget_origins(${who.owner}, ${id.data}, ${origins.data}::text[]) as ok`;
  if (!row!.ok) return gonePage(kit, ctx, who);
  await keysPage(kit, ctx, who, { message: notice('Origins saved: widgets follow them within a second.') });
}

async function revoke(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  const id = rowId.safeParse(fields.key);
  const [row] = id.success ? await kit.sql<{ ok: boolean }[]>`select app.console_revoke_widget_key(${who.owner}, ${id.data}) as ok` : [{ ok: false }];
  if (!row!.ok) return gonePage(kit, ctx, who);
  await keysPage(kit, ctx, who, { message: notice('Widget key revoked: every widget using it goes blank within a second.') });
}

/** The builder's options from its query: the first of each, defaults for those not given. */
function builderOptions(query: Record<string, string>) {
  const widget: WidgetName = (WIDGET_NAMES as readonly string[]).includes(query.widget ?? '') ? (query.widget as WidgetName) : 'coin-card';
  const given: Record<string, string> = {
    theme: query.theme || 'light', currency: query.currency || 'usd', locale: query.locale || 'en',
    ...(widget === 'ticker' ? { coins: query.coins || 'bitcoin,ethereum,solana' } : { coin: query.coin || 'bitcoin' }),
    ...(widget === 'mini-chart' ? { range: query.range || '7d' } : {}),
  };
  return { widget, given };
}

async function builder(kit: Kit, ctx: Context, who: Account) {
  const keys = await keysOf(kit, who.owner);
  const query = firstValues(ctx.query);
  const key = keys.find((one) => one.id === query.key) ?? keys[0];
  if (!key) return kit.page(ctx, 'Widget builder', noKeyView(), 200, who);
  const { widget, given } = builderOptions(query);
  const parsed = widgetOptions(widget).safeParse(given);
  const fiats = await kit.sql<{ slug: string; name: string }[]>`select slug, name from api.fiats()`;
  const base = publicBase(ctx, kit.config);
  const url = parsed.success ? `${base}/widgets/${widget}?${new URLSearchParams({ key: key.publishable_key, ...given })}` : null;
  kit.page(ctx, 'Widget builder', builderView({ keys, key, widget, given, errors: parsed.success ? {} : fieldErrors(parsed.error), fiats, url, base }), parsed.success ? 200 : 422, who);
  // the preview is the widget itself, from this origin: the one page of the console that frames
  ctx.set('Content-Security-Policy', `${ctx.response.get('Content-Security-Policy')}; frame-src 'self'`);
}
