// Everything beside /api/v1 that anyone may read without a key: the discovery documents, the status
// page, the changelog, the documents of docs/ (the versioning policy at /versioning), the HTML API
// reference (/docs/api, also /api/v1/docs) and the logos of coins, exchanges and wallets
// (/logos/{kind}/{slug}.svg). src/service.ts hands the router to the HTTP app, which never imports it.
import Router from '@koa/router';
import type { Config } from '../config.ts';
import type { Deps } from '../http/admission.ts';
import { LOGO_PATH } from '../http/logos.ts';
import { REFERENCE_PATHS } from '../http/routes.ts';
import { changelogHtml, changelogJson } from './changelog.ts';
import { apiCatalog, apisJson, logo, securityTxt } from './discovery.ts';
import { DOCUMENTS, documentPage } from './documents.ts';
import { logoRoute } from './monogram.ts';
import { REFERENCE_SCRIPT_PATH, referencePage, referenceScript } from './reference.ts';
import { pageShell, REFRESH_SCRIPT, REFRESH_SCRIPT_PATH } from './shell.ts';
import { statusJson, statusPage } from './status.ts';

/** The public pages' router; `links`: what the pages' navigation adds for what else is served ([path, label]). */
export const pagesRouter = (links: (config: Config) => [string, string][]) => (deps: Deps) => {
  const page = pageShell(links(deps.config));
  const router = new Router();
  router.get('/apis.json', apisJson(deps.config));
  router.get('/.well-known/api-catalog', apiCatalog(deps.config));
  router.get('/.well-known/security.txt', securityTxt(deps.config));
  router.get('/logo.svg', logo);
  router.get(`${LOGO_PATH}:kind/:file`, logoRoute(deps));
  router.get('/status', statusPage(deps, page));
  router.get(REFRESH_SCRIPT_PATH, (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = REFRESH_SCRIPT;
  });
  router.get('/status.json', statusJson(deps));
  router.get('/changelog', changelogHtml(page));
  router.get('/changelog.json', changelogJson);
  for (const path of REFERENCE_PATHS) router.get(path, referencePage);
  router.get(REFERENCE_SCRIPT_PATH, referenceScript);
  for (const [path, { file, title }] of Object.entries(DOCUMENTS)) router.get(path, documentPage(file, title, page));
  return router;
};
