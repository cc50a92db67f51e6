// GET /logos/{kind}/{slug}.svg: the monogram of a coin, exchange or wallet (letters on a disc in a
// colour derived from the slug), public and cacheable; the logo a row without a configured image
// names (market.logo_url, made absolute by src/http/logos.ts).
import type { Context } from 'koa';
import { strongEtag } from '../http/cache.ts';
import { ApiError } from '../http/errors.ts';
import { html } from '../html.ts';
import type { Deps } from '../http/admission.ts';

const KINDS = new Set(['coins', 'exchanges', 'wallets']);
const FILE = /^([a-z0-9]+(?:-[a-z0-9]+)*)\.svg$/;
/** Names and symbols change rarely; the ETag revalidates after a day. */
const MAX_AGE = 86_400;

export function monogramSvg(letters: string, title: string, hue: number): string {
  const size = [...letters].length > 1 ? 26 : 32;
  // the HTML escaping is XML's too: &, <, >, " and ' (as &#39;) are all valid in SVG text and attributes
  const svg = html`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img">`;
  const disc = html`<circle cx="32" cy="32" r="32" fill="hsl(${hue} 55% 40%)"/>`;
  const font = html`font-family="system-ui,-apple-system,Segoe UI,Roboto,sans-serif" font-size="${size}" font-weight="600"`;
  return html`${svg}<title>${title}</title>${disc}<text x="32" y="33" fill="#fff" ${font} text-anchor="middle" dominant-baseline="middle">${letters}</text></svg>`.text;
}

export function logoRoute({ sql }: Pick<Deps, 'sql'>) {
  return async (ctx: Context) => {
    const slug = FILE.exec(ctx.params.file ?? '')?.[1];
    const kind = ctx.params.kind ?? '';
    if (!slug || !KINDS.has(kind)) throw ApiError.notFound('logo');
    const [row] = await sql<{ letters: string; title: string; hue: number }[]>`
      select letters, title, hue from api.logo_monogram(${kind}, ${slug})`;
    if (!row) throw ApiError.notFound('logo');
    const svg = monogramSvg(row.letters, row.title, row.hue);
    ctx.status = 200;
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', `public, max-age=${MAX_AGE}`);
    ctx.set('ETag', strongEtag(svg));
    // an <img> on any site may show it (helmet's default would allow the same origin only)
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    if (ctx.fresh) ctx.status = 304;
    else ctx.body = svg;
  };
}

