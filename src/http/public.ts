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
import { htmlPage, markdownToHtml } from './pages.ts';
import { REFERENCE_PATHS, REFERENCE_SCRIPT_PATH, referencePage, referenceScript } from './reference.ts';
import type { Deps } from './admission.ts';
import { statusJson, statusPage } from './status.ts';

const ROOT = new URL('../../', import.meta.url);
// the documents served, by path: read once, they ship with the code
const DOCUMENTS: Record<string, { file: string; title: string }> = {
  '/docs': { file: 'README.md', title: 'Documentation' },
  '/versioning': { file: 'docs/versioning.md', title: 'Versioning and deprecation policy' },
  '/docs/status': { file: 'docs/status.md', title: 'Status page' },
  '/docs/indicators': { file: 'docs/indicators.md', title: 'Technical indicators' },
  '/docs/sentiment': { file: 'docs/sentiment.md', title: 'Sentiment' },
  '/terms': { file: 'docs/terms.md', title: 'Terms of use' },
};

function documentPage(file: string, title: string) {
  let html: string | undefined;
  return async (ctx: Context) => {
    html ??= markdownToHtml(readFileSync(new URL(file, ROOT), 'utf8'));
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
  router.get('/status.json', statusJson(deps));
  router.get('/changelog', changelogHtml);
  router.get('/changelog.json', changelogJson);
  for (const path of REFERENCE_PATHS) router.get(path, referencePage);
  router.get(REFERENCE_SCRIPT_PATH, referenceScript);
  for (const [path, { file, title }] of Object.entries(DOCUMENTS)) router.get(path, documentPage(file, title));
}
