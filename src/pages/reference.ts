// The HTML API reference for people: Redoc's standalone bundle (the installed redoc package) rendering
// the service's own /api/v1/openapi.json. Everything comes from this service: the page loads one
// script and the document, no fonts or CDN, and its Content-Security-Policy allows nothing else.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Context } from 'koa';
import { strongEtag } from '../http/cache.ts';
import { html } from '../html.ts';
import { API_PREFIX } from '../http/routes.ts';

/** Redoc's bundle, beside the page (which is served at REFERENCE_PATHS, src/http/routes.ts). */
export const REFERENCE_SCRIPT_PATH = '/docs/api/redoc.standalone.js';
const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;

// Read once at start-up. Its source-map comments (its own and its search worker's) are dropped: the
// maps are not served, and a browser with developer tools open would ask for them. The one outside
// request Redoc makes by itself, its side menu's "API docs by Redocly" logo from its CDN (no option
// turns it off), becomes an empty inline image; the credit's text and link stay.
const REDOCLY_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const BUNDLE = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
// a newer redoc that moved the logo must be looked at again, not served with a request elsewhere
if (BUNDLE.split(REDOCLY_LOGO).length !== 2) throw new Error(`redoc's bundle no longer names ${REDOCLY_LOGO} once: check its outside requests`);
// Its side menu's items carry an aria-label of the summary alone, while they show a badge before it
// ("Event" for a webhook): a name that is not what is seen (axe-core's label-content-name-mismatch,
// a WCAG 2.5.3 failure). Without the label the name is what is shown.
const MENU_ITEM_LABEL = 'role:"menuitem","aria-label":e.sidebarLabel,';
if (BUNDLE.split(MENU_ITEM_LABEL).length !== 2) throw new Error("redoc's bundle changed its side menu items: check their accessible names again");
const SCRIPT = BUNDLE.replace(REDOCLY_LOGO, "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E")
  .replace(MENU_ITEM_LABEL, 'role:"menuitem",')
  .replace(/\/\/# sourceMappingURL=[\w.-]+\.map/g, '');
const SCRIPT_ETAG = strongEtag(SCRIPT);

// Redoc injects its styles as <style> elements and builds its search worker from a blob: URL; the
// rest (script, document, images) is this origin's. No 'unsafe-eval', no other origin.
const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "worker-src 'self' blob:", "connect-src 'self'",
  "img-src 'self' data:", "font-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

// Redoc's <redoc> element is initialised by the bundle itself from its attributes (no inline script):
// the options are kebab-case attributes. The script comes after the element it looks up.
const PAGE = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · market-data-api</title></head>
<body><redoc spec-url="${OPENAPI_PATH}" native-scrollbars="true" path-in-middle-panel="true"></redoc>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
</body></html>
`.text;

/** The reference page: its own CSP (stricter in what it loads than helmet's default, which it replaces). */
export async function referencePage(ctx: Context) {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('Cache-Control', 'no-cache');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
}

/** Redoc's bundle: cacheable for a day, revalidated by its ETag (it changes only with the package). */
export async function referenceScript(ctx: Context) {
  ctx.set('ETag', SCRIPT_ETAG);
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.type = 'text/javascript; charset=utf-8';
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.body = SCRIPT;
}
