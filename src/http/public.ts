// Everything beside /api/v1 that anyone may read without a key: the discovery documents, the
// status page, the changelog, the documents of docs/ (the versioning policy at /versioning), the
// HTML API reference (/docs/api, also /api/v1/docs) and the logos of coins, exchanges and wallets
// (/logos/{kind}/{slug}.svg).
import { readFileSync } from 'node:fs';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { changelogHtml, changelogJson } from './changelog.ts';
import { apiCatalog, apisJson, logo, securityTxt } from './discovery.ts';
import { logoRoute } from './logos.ts';
import { htmlPage, markdownToHtml, REFRESH_SCRIPT, REFRESH_SCRIPT_PATH } from './pages.ts';
import { REFERENCE_PATHS, REFERENCE_SCRIPT_PATH, referencePage, referenceScript } from './reference.ts';
import type { Deps } from './admission.ts';
import { statusJson, statusPage } from './status.ts';

const ROOT = new URL('../../', import.meta.url);
/** The documents served, by path (read once: they ship with the code); /docs is the API user's. */
export const DOCUMENTS: Record<string, { file: string; title: string }> = {
  '/docs': { file: 'docs/api.md', title: 'Using the API' },
  '/versioning': { file: 'docs/versioning.md', title: 'Versioning and deprecation policy' },
  '/docs/status': { file: 'docs/status.md', title: 'Status page' },
  '/docs/indicators': { file: 'docs/indicators.md', title: 'Technical indicators' },
  '/docs/sentiment': { file: 'docs/sentiment.md', title: 'Sentiment' },
  '/terms': { file: 'docs/terms.md', title: 'Terms of use' },
};

const PATH_OF_FILE = new Map(Object.entries(DOCUMENTS).map(([path, { file }]) => [file, path]));

/**
 * Where a link of a served document leads once served: a link to another served document by its
 * file (`indicators.md`, as it works in the repository) becomes that document's path; any other
 * link is kept as written (the renderer makes links only of absolute URLs, paths and anchors).
 */
export function servedHref(file: string, href: string): string {
  if (/^([a-z]+:|\/|#)/.test(href)) return href;
  const [target, anchor] = href.split('#') as [string, string | undefined];
  const resolved = new URL(target, new URL(file, 'file:///')).pathname.slice(1);
  const path = PATH_OF_FILE.get(resolved);
  return path ? `${path}${anchor ? `#${anchor}` : ''}` : href;
}

function documentPage(file: string, title: string) {
  let html: string | undefined;
  return async (ctx: Context) => {
    html ??= markdownToHtml(readFileSync(new URL(file, ROOT), 'utf8')
      .replace(/\]\(([^)\s]+)\)/g, (_, href: string) => `](${servedHref(file, href)})`));
    htmlPage(ctx, title, html);
  };
}

export function mountPublic(router: Router, deps: Deps) {
  router.get('/apis.json', apisJson(deps.config));
  router.get('/.well-known/api-catalog', apiCatalog(deps.config));
  router.get('/.well-known/security.txt', securityTxt(deps.config));
  router.get('/logo.svg', logo);
  router.get('/logos/:kind/:file', logoRoute(deps));
  router.get('/status', statusPage(deps));
  router.get(REFRESH_SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = REFRESH_SCRIPT;
  });
  router.get('/status.json', statusJson(deps));
  router.get('/changelog', changelogHtml);
  router.get('/changelog.json', changelogJson);
  for (const path of REFERENCE_PATHS) router.get(path, referencePage);
  router.get(REFERENCE_SCRIPT_PATH, referenceScript);
  for (const [path, { file, title }] of Object.entries(DOCUMENTS)) router.get(path, documentPage(file, title));
}
