// The embeddable widgets at /widgets: a price ticker band, a coin card and a mini chart, each a
// whole HTML page for an <iframe> (or inserted by /widgets/embed.js), fetching nothing from
// anywhere else: the stylesheet is inline (allowed by its hash), the charts inline SVG, and the one
// script, refresh.js, same-origin (it polls the page's own URL with its ETag).
//
// A request names a widget key (publishable, mdw_…) and is answered only for a page of one of the
// key's origins (Origin, else Referer; the service's own pages too: the console's preview, and the
// widget reloading itself), with frame-ancestors listing those origins. Refusals and bad options
// are rendered inside the frame, never a 500. A page view is counted against the key's own monthly
// quota (a widget plan; the Data API's quota is separate) through the admission batcher, once its
// body is sent: a 304 from the ETag, a refusal or an error costs nothing. Bodies come from the
// API's response cache (src/http/cache.ts), shared by every key and invalidated with the market
// data, so a view costs about what a cached API answer does.
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { Deps } from '../http/admission.ts';
import { admissionDecision } from '../http/admission.ts';
import { MARKET_CACHE, type CachedRoute, type ResponseCache } from '../http/cache.ts';
import { publicBase } from '../http/base.ts';
import { firstValues } from '../http/validation.ts';
import { keyDigest } from '../keys.ts';
import { LOCALES, THEMES, WIDGET_NAMES, WIDGET_OPTIONS, type Locale, type Theme, type WidgetName } from '../widget-options.ts';
import { requestOrigin, WidgetKeys } from './origins.ts';
import { coinCard, errorPage, miniChart, STYLE_SOURCE, ticker, type Look, type WidgetCoin } from './render.ts';

/** A widget key as the console makes it: mdw_ and 32 base64url characters. */
export const WIDGET_KEY = /^mdw_[A-Za-z0-9_-]{20,64}$/;

interface Widget {
  options: z.ZodType<{ theme: Theme; currency: string; locale: Locale; coins?: string[]; coin?: string; range?: string }>;
  /** the coins, and the series period, it asks api.widget_coins for */
  reads: (options: { coins?: string[]; coin?: string; range?: string }) => { slugs: string[]; period: string | null };
  render: (coins: WidgetCoin[], options: { range?: string }, look: Look) => string;
}

const WIDGETS: Record<WidgetName, Widget> = {
  ticker: {
    options: WIDGET_OPTIONS.ticker,
    reads: ({ coins }) => ({ slugs: coins!, period: null }),
    render: (coins, _, look) => ticker(coins, look),
  },
  'coin-card': {
    options: WIDGET_OPTIONS['coin-card'],
    reads: ({ coin }) => ({ slugs: [coin!], period: '7d' }),
    render: ([one], _, look) => coinCard(one!, look),
  },
  'mini-chart': {
    options: WIDGET_OPTIONS['mini-chart'],
    reads: ({ coin, range }) => ({ slugs: [coin!], period: range! }),
    render: ([one], { range }, look) => miniChart(one!, range!, look),
  },
};


/** The plan gate of a widget request: every widget plan may show every widget. */
const WIDGET_PLAN = 'widget-free';

export function widgetRouter(deps: Deps, cache: ResponseCache): Router {
  const router = new Router({ prefix: '/widgets' });
  const keys = new WidgetKeys(deps.sql, deps.admission);
  // the widgets read market data: its versions are followed whatever the API's routes are
  void cache.versions.start().catch(() => {});
  for (const name of ['embed.js', 'refresh.js']) {
    const script = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    router.get(`/${name}`, (ctx) => {
      ctx.type = 'text/javascript; charset=utf-8';
      // embed.js is loaded by other origins' pages as a classic script (no-cors): CORP must let them
      ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.body = script;
    });
  }

  for (const name of WIDGET_NAMES) {
    const widget = WIDGETS[name];
    // revalidated on every use: a browser's cached copy would be shown on a page its key does not list
    const route: CachedRoute = { method: 'get', path: `/widgets/${name}`, cache: { ...MARKET_CACHE, revalidate: true }, query: widget.options };
    const serve = cache.serve(route, route.path)!;
    router.get(`/${name}`, (ctx) => answer(ctx, name, widget, serve));
  }

  async function answer(ctx: Context, name: WidgetName, widget: Widget, serve: NonNullable<ReturnType<ResponseCache['serve']>>) {
    const query = firstValues(ctx.query);
    const look = errorLook(query);
    const key = query.key;
    if (!key || !WIDGET_KEY.test(key)) return refuse(ctx, 401, 'No widget key', 'The embedding code must give the widget key (key=mdw_…) from the developer console.', look);
    const digest = keyDigest(key);
    const found = await keys.lookup(digest);
    if (!found) return refuse(ctx, 401, 'Widget key not valid', 'This widget key is unknown or was revoked.', look);

    // A navigation started by the service's own page (the widget reloading itself, the console's
    // preview) says so in Sec-Fetch-Site, which a page cannot forge; Referer may be left out then.
    const self = publicBase(ctx, deps.config);
    const origin = ctx.get('sec-fetch-site') === 'same-origin' ? self : requestOrigin(ctx);
    if (origin !== self && (origin === null || !found.origins.includes(origin))) {
      return refuse(ctx, 403, 'Widget not allowed here', origin === null
        ? 'The page sent no Origin or Referer header, so the widget cannot tell where it is shown. Embed it with referrerpolicy="origin".'
        : `This widget key does not list ${origin} among the sites that may show it.`, look);
    }
    const ancestors = `'self' ${found.origins.join(' ')}`;

    const { key: _, ...given } = query;
    const parsed = widget.options.safeParse(given);
    if (!parsed.success) {
      const messages = parsed.error.issues.map((issue) => `${String(issue.path[0] ?? 'options')}: ${issue.message}`).join(' ');
      return refuse(ctx, 422, 'Widget options not valid', messages, look, ancestors);
    }
    const options = parsed.data;
    const admit = { endpoint: `widget:${name}`, plan: WIDGET_PLAN, scope: 'widget', key } as const;
    const presented = { key, digest };
    // checked without counting: the view is counted once its body is sent (a 304 is not a view)
    const checked = await admissionDecision(ctx, deps, presented, { ...admit, consume: false });
    if (checked.outcome !== 'ok') return refuse(ctx, 401, 'Widget key not valid', 'This widget key is unknown or was revoked.', look);
    if (Number(checked.quota_used) >= Number(checked.quota_limit)) {
      return refuse(ctx, 429, 'Widget paused', 'This widget has been shown as often as its plan allows this month.', look, ancestors);
    }

    widgetHeaders(ctx, ancestors, true);
    const reads = widget.reads(options);
    const widgetLook: Look = { theme: options.theme, locale: options.locale, currency: options.currency, refreshSeconds: MARKET_CACHE.maxAgeSeconds };
    const produce = async () => {
      const [row] = await deps.sql<{ coins: WidgetCoin[] }[]>`
        select api.widget_coins(${reads.slugs}::text[], ${options.currency}, ${reads.period}) as coins`;
      return widget.render(row!.coins, options, widgetLook);
    };
    try {
      await serve(ctx, { query: options, params: {} }, produce, 200, null);
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      if (code === 'MD404') return refuse(ctx, 404, 'Unknown coin', `${message} Check the coin's slug (as in /api/v1/coins).`, look, ancestors);
      if (code === 'MD422') return refuse(ctx, 422, 'Widget options not valid', message ?? '', look, ancestors);
      throw error;
    }
    if (ctx.status !== 200) return;
    // the body was written through Koa as the cache writes an answer (JSON's type): it is HTML
    ctx.type = 'text/html; charset=utf-8';
    await admissionDecision(ctx, deps, presented, { ...admit, consume: true });
  }

  return router;
}

/** A widget page's headers: framed by its key's origins only, loading nothing, sending no Referer elsewhere. */
function widgetHeaders(ctx: Context, ancestors: string, script = false) {
  // The one script is a file of this origin: a nonce cannot be, the body being cached and shared.
  ctx.set('Content-Security-Policy', `default-src 'none'; ${script ? "script-src 'self'; connect-src 'self'; " : ''}style-src ${STYLE_SOURCE}; base-uri 'none'; form-action 'none'; frame-ancestors ${ancestors}`);
  // frame-ancestors decides framing; helmet's X-Frame-Options (same origin) would contradict it in old browsers
  ctx.remove('X-Frame-Options');
  ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
  // the page's reload of itself carries its URL (same origin); nothing else is requested
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Vary', 'Accept-Encoding');
}

/**
 * A refusal or an error as a page inside the frame, never cached. Framing by any page (frame-ancestors
 * *) when the key's origins are not yet known or not the asker's: the message holds no data and
 * nothing to click, and the site's owner must be able to read why the widget is blank.
 */
function refuse(ctx: Context, status: number, title: string, message: string, look: Pick<Look, 'theme' | 'locale'>, ancestors = '*') {
  widgetHeaders(ctx, ancestors);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = errorPage(title, message, look);
}

/** The theme and locale an error is shown in: the request's when valid, else light and en. */
function errorLook(query: Record<string, string>): Pick<Look, 'theme' | 'locale'> {
  return {
    theme: (THEMES as readonly string[]).includes(query.theme ?? '') ? (query.theme as Theme) : 'light',
    locale: (LOCALES as readonly string[]).includes(query.locale ?? '') ? (query.locale as Locale) : 'en',
  };
}
