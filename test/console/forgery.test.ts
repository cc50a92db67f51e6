// Forged forms on every console POST route: the routes are read from the composed console router's
// layers (a new form is covered without editing this test), each posted with the fields its page
// offers (found by crawling the pages as a user holding one of everything and as an admin) but
// without the CSRF field, with a made-up one, and with the token of another session; as that user,
// as the admin and signed out. Every one is the form check's 403 ("This form has expired") and
// nothing the console writes has changed.
import test from 'ava';
import type { Layer } from '@koa/router';
import { startMailbox } from '../../dev/mailbox.ts';
import { consoleRouter } from '../../src/console/router.ts';
import { useApi } from '../helpers/http.ts';
import { accountWithEverything, ConsoleClient, consoleCoin, crawl, everythingEnv, signedInAccount, type Found } from '../helpers/console.ts';

const mailbox = await startMailbox();
test.after.always(() => mailbox.stop());
const ENV = everythingEnv(mailbox.url);
const handles = useApi(test, { env: ENV, setup: ({ db }) => consoleCoin(db.sql, 'console-forgery') });

/** The tables console forms write (accounts, sessions, links, keys, alarms, webhooks, widget keys, push, sign-in attempts, mail). */
const WRITTEN = [
  'owners', 'console_sessions', 'console_tokens', 'auth_failures', 'api_keys', 'widget_keys', 'alarms', 'alarm_inventory',
  'webhook_endpoints', 'webhook_events', 'webhook_deliveries', 'push_subscriptions', 'push_messages', 'email_messages',
];

/** Every row of those tables, in a stable order. */
async function snapshot() {
  const { sql } = handles.db;
  const tables: Record<string, unknown> = {};
  for (const table of WRITTEN) {
    const [row] = await sql<{ rows: unknown }[]>`select coalesce(jsonb_agg(to_jsonb(t) order by to_jsonb(t)::text), '[]') as rows from ${sql('app')}.${sql(table)} t`;
    tables[table] = row!.rows;
  }
  return tables;
}

const body = (fields: [string, string][]) => Object.fromEntries(fields);

test('every console POST route refuses a forged form (no CSRF field, a wrong one, another session\'s) with 403, signed in or not, admin or not, and nothing changes', async (t) => {
  const { db, api } = handles;
  const { owner, client: user } = await accountWithEverything(db.sql, api.base, 'forged-user@example.com');
  const { client: admin } = await signedInAccount(db.sql, api.base, 'forged-admin@example.com', 'forgery admin', true);
  const anonymous = new ConsoleClient(api.base, 'forgery anonymous');
  await anonymous.get('/console/sign-in');
  const found: Found = { forms: [], urls: new Map() };
  await crawl(user, ['/console/', '/console/sign-in', '/console/sign-up', '/console/reset', '/console/reset/set?token=x', '/console/invite?token=x'], found, t);
  await crawl(admin, ['/console/', `/console/admin/accounts/${encodeURIComponent(owner)}`, `/console/admin/accounts/${encodeURIComponent(owner)}/disable`], found, t);
  await user.get('/console/keys');
  await admin.get('/console/keys');

  const router = consoleRouter({ sql: db.sql, config: db.config(ENV) });
  const routes = (router.stack as Layer[]).filter((layer) => layer.methods.includes('POST'));
  t.true(routes.length >= 30, `${routes.length} POST routes`);

  const before = await snapshot();
  const clients: [string, ConsoleClient, string][] = [['user', user, admin.csrf!], ['admin', admin, user.csrf!], ['signed out', anonymous, user.csrf!]];
  const unforms: string[] = [];
  const accepted: string[] = [];
  for (const layer of routes) {
    // the form a page offers for this route (a path with real ids), else the path with 1 for each parameter
    const form = found.forms.find((one) => one.method === 'POST' && layer.match(one.path));
    if (!form) unforms.push(String(layer.path));
    const path = form?.path ?? String(layer.path).replace(/:\w+/g, '1');
    const fields = [...(form?.fields ?? [])].filter(([name]) => name !== 'csrf');
    for (const [who, client, otherToken] of clients) {
      for (const [forgery, csrf] of [['no CSRF field', undefined], ['a made-up CSRF value', 'x'.repeat(43)], ['another session\'s token', otherToken]] as const) {
        const sent = csrf === undefined ? body(fields) : body([...fields, ['csrf', csrf]]);
        const page = await client.request('POST', path, sent);
        if (page.status !== 403 || !page.text.includes('This form has expired')) accepted.push(`POST ${path} as ${who} with ${forgery}: ${page.status} ${page.location ?? ''}`);
      }
    }
  }
  t.deepEqual(accepted, [], 'forged forms that passed');
  t.deepEqual(unforms, [], 'POST routes that no page offers a form for: make the crawl reach the page that shows it');
  t.deepEqual(await snapshot(), before, 'nothing written');
  t.log(`${routes.length} POST routes, ${routes.length * clients.length * 3} forged forms`);
  // and the genuine forms still work: the check refuses the forgeries only
  t.is((await user.get('/console/keys')).status, 200);
  t.is((await user.post('/console/keys/rename', { key: String((await db.sql`select id from app.api_keys where owner = ${owner} and scope = 'data-api' limit 1`)[0]!.id), name: 'renamed' })).status, 200);
});
