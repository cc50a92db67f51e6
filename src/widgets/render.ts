// The widgets' HTML: a whole page each, small, with one stylesheet inline (allowed by its hash) and
// one same-origin script, refresh.js, that polls the page's own URL after max-age through the
// browser's cache, which revalidates with the ETag (a <meta refresh> would do without script, but
// reloading a page on a timer fails WCAG 2.2.1, and axe says so). Charts are SVG drawn here from
// the series the database gives.
import { createHash } from 'node:crypto';
import { Html, html } from '../html.ts';
import type { Locale, Theme } from '../widget-options.ts';
import { formatChange, formatDecimal, formatPrice } from './format.ts';


/** One coin as api.widget_coins gives it (prices in the widget's currency, as decimal strings). */
export interface WidgetCoin {
  slug: string;
  symbol: string;
  name: string;
  price: string | null;
  marketcap: string | null;
  change_24h: number | null;
  last_updated: string | null;
  series?: { points: string[]; low: string | null; high: string | null; change: number | null } | null;
}

export interface Look {
  theme: Theme;
  locale: Locale;
  currency: string;
  /** how often the page asks for itself again (the cache's max-age, by refresh.js); none on an error */
  refreshSeconds?: number;
}

// Contrast at least 4.5:1 in both themes (WCAG AA): the browser test runs axe on a widget.
export const STYLE = `:root{color-scheme:light;--bg:#fff;--fg:#16181d;--muted:#4b5260;--line:#d5d9e0;--up:#0a7a33;--down:#b3261e}
.dark{color-scheme:dark;--bg:#14161a;--fg:#f1f3f6;--muted:#b4bac4;--line:#343a44;--up:#4ade80;--down:#ff8a80}
*{box-sizing:border-box}html,body{margin:0;height:100%}body{font:14px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg);padding:10px 12px;overflow:hidden}
h1{font-size:15px;margin:0;font-weight:600}.sym{color:var(--muted);font-weight:400}.price{font-size:24px;font-weight:650;margin:4px 0 2px;font-variant-numeric:tabular-nums}
.up{color:var(--up)}.down{color:var(--down)}.flat{color:var(--muted)}.muted,dt{color:var(--muted)}dl{display:flex;gap:6px;margin:2px 0}dd{margin:0}
svg{display:block;width:100%;height:auto;margin-top:6px}.line{fill:none;stroke-width:1.6;stroke-linejoin:round}.area{opacity:.14}
ul.ticker{list-style:none;margin:0;padding:0;display:flex;gap:18px;white-space:nowrap;overflow:hidden;align-items:center;height:100%}
ul.ticker li{display:flex;gap:6px;align-items:baseline;font-variant-numeric:tabular-nums}ul.ticker b{font-weight:600}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.error{display:flex;flex-direction:column;justify-content:center;height:100%;text-align:center}.error p{margin:2px 0}`;

/** The CSP source of the one stylesheet (its hash: no inline style else, and no nonce in a cached body). */
export const STYLE_SOURCE = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

function document(title: string, look: Pick<Look, 'theme' | 'locale' | 'refreshSeconds'>, body: Html): string {
  return html`<!doctype html>
<html lang="${look.locale}" class="${look.theme}"${look.refreshSeconds ? html` data-refresh="${look.refreshSeconds}"` : ''}><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${look.refreshSeconds ? html`<script src="/widgets/refresh.js" defer></script>` : ''}<title>${title}</title>
<style>${new Html(STYLE)}</style></head>
<body>${body}</body></html>
`.text;
}

const trend = (change: number | null) => (change === null || change === 0 ? 'flat' : change > 0 ? 'up' : 'down');

function change(percent: number | null, look: Look, label: string): Html {
  return html`<span class="${trend(percent)}"><span class="visually-hidden">${label} </span>${formatChange(percent, look.locale)}</span>`;
}

/**
 * A line (and the area under it) through the closes, scaled to the box. The decimal strings become
 * floats here and only here: a pixel position is a display rounding, a few hundredths of a pixel
 * at most, and nothing computed from it is shown as a number.
 */
export function sparkline(points: string[], width: number, height: number, label: string, rising: boolean): Html {
  if (points.length < 2) return html`<p class="muted">No price history for this period yet.</p>`;
  const values = points.map(Number);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = high - low || 1;
  const pad = 2;
  const xy = values.map((value, i) => [
    (i / (values.length - 1)) * width,
    pad + (1 - (value - low) / span) * (height - 2 * pad),
  ]);
  const line = xy.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${x!.toFixed(1)} ${y!.toFixed(1)}`).join('');
  const colour = rising ? 'var(--up)' : 'var(--down)';
  return html`<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${label}" preserveAspectRatio="none">
<path class="area" fill="${colour}" d="${line}L${width} ${height}L0 ${height}Z"/><path class="line" stroke="${colour}" d="${line}"/></svg>`;
}

const PERIODS: Record<string, string> = { '1d': '24 hours', '7d': '7 days', '30d': '30 days' };

export function coinCard(coin: WidgetCoin, look: Look): string {
  const series = coin.series;
  const price = coin.price === null ? '–' : formatPrice(coin.price, look.locale, look.currency);
  return document(`${coin.name} price`, look, html`<h1>${coin.name} <span class="sym">${coin.symbol}</span></h1>
<p class="price">${price}</p>
<dl><dt>24 h</dt><dd>${change(coin.change_24h, look, '24 hour change')}</dd></dl>
<dl><dt>Market cap</dt><dd>${coin.marketcap === null ? '–' : formatDecimal(coin.marketcap, look.locale, 0, look.currency.toUpperCase())}</dd></dl>
${series ? sparkline(series.points, 300, 60, `${coin.name} price over 7 days`, (series.change ?? 0) >= 0) : ''}`);
}

export function miniChart(coin: WidgetCoin, range: string, look: Look): string {
  const series = coin.series;
  const price = coin.price === null ? '–' : formatPrice(coin.price, look.locale, look.currency);
  const money = (value: string | null | undefined) => (value ? formatPrice(value, look.locale, look.currency) : '–');
  return document(`${coin.name} price chart`, look, html`<h1>${coin.name} <span class="sym">${coin.symbol}</span> <span class="muted">· ${PERIODS[range]}</span></h1>
<p class="price">${price} ${change(series?.change ?? null, look, `Change over ${PERIODS[range]}`)}</p>
${series ? sparkline(series.points, 460, 150, `${coin.name} price over ${PERIODS[range]}, from ${money(series.points[0])} to ${money(series.points.at(-1))}`, (series.change ?? 0) >= 0) : ''}
<dl><dt>Low</dt><dd>${money(series?.low)}</dd><dt>High</dt><dd>${money(series?.high)}</dd></dl>`);
}

export function ticker(coins: WidgetCoin[], look: Look): string {
  return document('Crypto prices', look, html`<ul class="ticker">${coins.map((coin) => html`<li><b>${coin.symbol}</b> <span>${coin.price === null ? '–' : formatPrice(coin.price, look.locale, look.currency)}</span> ${change(coin.change_24h, look, '24 hour change')}</li>`)}</ul>`);
}

/** A refusal or an error, rendered inside the widget's frame: what went wrong and for whom to fix. */
export function errorPage(title: string, message: string, look: Pick<Look, 'theme' | 'locale'> = { theme: 'light', locale: 'en' }): string {
  return document(title, look, html`<div class="error" role="alert"><p><strong>${title}</strong></p><p class="muted">${message}</p></div>`);
}
