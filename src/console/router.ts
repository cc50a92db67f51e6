// The developer console at /console: server-rendered pages (./html.ts) for key holders and the
// operator, forms posted with a CSRF token, the logic in SQL (sql/functions/900_console.sql). Each
// page group is a file of its actions (<group>.ts) beside one of its markup (<group>.views.ts),
// declaring its routes on the kit's `Routes` (./kit.ts), which put the form check before every POST
// handler. Mounted by the composition root (src/service.ts) beside the API; CONSOLE=off mounts nothing.
import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Deps } from '../http/admission.ts';
import { accountPages } from './account.ts';
import { alarmPages } from './alarms.ts';
import { coinSearchPages } from './coins.ts';
import { keyPages } from './api-keys.ts';
import { authPages } from './auth.ts';
import { operatorPages } from './operator.ts';
import { consoleKit, type PageGroup } from './kit.ts';
import { webhookPages } from './webhooks.ts';
import { usagePages } from './usage.ts';
import { widgetPages } from './widgets.ts';

const CSS = 'text/css; charset=utf-8';
const JS = 'text/javascript; charset=utf-8';
/** What the console serves under /console/assets/: [type, where the file is]; nothing is fetched from elsewhere. */
const ASSETS: Record<string, [type: string, file: () => URL | string]> = {
  'console.css': [CSS, () => new URL('./assets/console.css', import.meta.url)],
  'console.js': [JS, () => new URL('./assets/console.js', import.meta.url)],
  'push.js': [JS, () => new URL('./assets/push.js', import.meta.url)],
  'coin-search.js': [JS, () => new URL('./assets/coin-search.js', import.meta.url)],
  'icon.svg': ['image/svg+xml', () => new URL('./assets/icon.svg', import.meta.url)],
  'usage-chart.js': [JS, () => new URL('./assets/usage-chart.js', import.meta.url)],
  // the usage chart's library (uPlot, MIT), as its package ships it
  'uplot.esm.js': [JS, () => new URL(import.meta.resolve('uplot/dist/uPlot.esm.js'))],
  'uplot.min.css': [CSS, () => new URL(import.meta.resolve('uplot/dist/uPlot.min.css'))],
};

/** The page groups, in the order their routes are tried. */
const GROUPS: PageGroup[] = [authPages, accountPages, keyPages, usagePages, alarmPages, webhookPages, widgetPages, coinSearchPages, operatorPages];

export function consoleRouter(deps: Deps): Router {
  const router = new Router({ prefix: '/console' });
  if (deps.config.CONSOLE === 'off') return router;
  const kit = consoleKit(deps);
  router.use(kit.parseForms);

  for (const [name, [type, file]] of Object.entries(ASSETS)) {
    router.get(`/assets/${name}`, async (ctx) => {
      let body: Buffer;
      try {
        body = await readFile(file());
      } catch {
        // a package not installed: its page still works without it (the chart is an enhancement)
        return;
      }
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = body;
    });
  }
  router.get('/', async (ctx) => ctx.redirect((await kit.account(ctx)) ? '/console/keys' : '/console/sign-in'));
  const routes = kit.routes(router);
  for (const group of GROUPS) group(routes, kit);
  // a POST route declared past `routes` (on the router itself) would miss the form check: refused at start
  const unchecked = router.stack.filter((layer) => layer.methods.includes('POST') && !layer.stack.includes(kit.checkForm));
  if (unchecked.length > 0) throw new Error(`console POST routes without the form check: ${unchecked.map((layer) => layer.path).join(', ')}`);
  return router;
}
