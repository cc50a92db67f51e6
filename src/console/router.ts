// The developer console at /console: server-rendered pages (./html.ts) for key holders and the
// operator, forms posted with a CSRF token, the logic in SQL (sql/functions/900_console.sql). Each
// page group is a file of its own, given the shared kit (./kit.ts). Mounted by the composition root
// (src/service.ts) beside the API; CONSOLE=off mounts nothing.
import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Deps } from '../http/admission.ts';
import { accountPages } from './account.ts';
import { keyPages } from './api-keys.ts';
import { authPages } from './auth.ts';
import { consoleKit, type PageGroup } from './kit.ts';
import { widgetPages } from './widgets.ts';

const ASSETS = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8', 'icon.svg': 'image/svg+xml' } as const;

/** The page groups, in the order their routes are tried. */
const GROUPS: PageGroup[] = [authPages, accountPages, keyPages, widgetPages];

export function consoleRouter(deps: Deps): Router {
  const router = new Router({ prefix: '/console' });
  if (deps.config.CONSOLE === 'off') return router;
  const kit = consoleKit(deps);
  router.use(kit.parseForms);

  for (const [name, type] of Object.entries(ASSETS)) {
    router.get(`/assets/${name}`, async (ctx) => {
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = await readFile(new URL(`./assets/${name}`, import.meta.url));
    });
  }
  router.get('/', async (ctx) => ctx.redirect((await kit.account(ctx)) ? '/console/keys' : '/console/sign-in'));
  for (const group of GROUPS) group(router, kit);
  return router;
}
