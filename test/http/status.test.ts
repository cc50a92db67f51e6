// /status.json and /status: every component's state under induced faults, and the page as a person
// sees it in a real browser (Debian's chromium driven by playwright-core).
import test from 'ava';
import { chromium } from 'playwright-core';
import { createSql } from '../../src/db/client.ts';
import { browserTest, CHROMIUM, screenshot } from '../helpers/browser.ts';
import { testApi, useApi } from '../helpers/http.ts';
import { onServer } from '../helpers/targets.ts';
import { sleep } from '../../dev/wait.ts';

const handles = useApi(test);

interface Component { id: string; name: string; state: string; figures: Record<string, any> }
const status = async () => {
  const response = await handles.api.get('/status.json', null);
  return { response, report: response.body.data as { status: string; version: string; components: Component[] } };
};
const component = (components: Component[], id: string) => components.find((c) => c.id === id);

/** Every component healthy: a fresh worker beat, current market and FX data, a recent sentiment reading. */
async function healthy() {
  const { sql } = handles.db;
  await sql`delete from app.webhook_deliveries`;
  await sql`delete from app.worker_heartbeats`;
  await sql`insert into app.worker_heartbeats (worker_id, process) values ('status-worker', 'test:1')`;
  // the demo market's source row is written by its first load; the test database has not loaded it
  await sql`insert into market.data_sources (name, kind, demo, description) values ('simulated', 'simulated', true, 'demo market')
    on conflict (name) do nothing`;
  await sql`update market.data_sources set last_run_at = now(), last_success_at = now(), last_error = null, last_error_at = null,
    covered_until = date_trunc('minute', now()), venues = null where name = 'simulated'`;
  await sql`update market.data_sources set last_run_at = null, last_success_at = null, last_error_at = null, covered_until = null
    where kind in ('simulated', 'exchange') and name <> 'simulated'`;
  await sql`delete from market.sentiment_snapshots where coin_id is null and kind = 'fear_greed'`;
  await sql`insert into market.sentiment_snapshots (kind, coin_id, reading, computed_at) values ('fear_greed', null, '{}', now())`;
}

test.serial('all healthy: operational, with each component and its figures, without a key', async (t) => {
  await healthy();
  const { response, report } = await status();
  t.is(response.status, 200);
  t.is(response.headers.get('cache-control'), 'no-store');
  t.is(report.status, 'operational', JSON.stringify(report.components));
  t.deepEqual(report.components.map((c) => c.id), ['api', 'database', 'worker', 'source:simulated', 'fx', 'sentiment', 'webhooks', 'email']);
  for (const c of report.components) t.is(c.state, 'operational', c.id);
  const database = component(report.components, 'database')!;
  t.like(database.figures, { kind: onServer ? 'server' : 'embedded', reachable: true, migrations_current: true });
  t.is(component(report.components, 'worker')!.figures.fresh_workers, 1);
  const market = component(report.components, 'source:simulated')!;
  t.true(market.figures.newest_data_age_seconds < 120);
  t.like(component(report.components, 'fx')!.figures, { source: 'fx-seed', demo: true });
  t.true(component(report.components, 'sentiment')!.figures.age_seconds < 60);
  t.like(component(report.components, 'webhooks')!.figures, { backlog: 0, failure_rate_24h: null });
  t.like(component(report.components, 'email')!.figures, { sending: 'off', backlog: 0 }, 'no SMTP_URL here: e-mail is off');
});

test.serial('a stale worker heartbeat, a failing source and stale data degrade; data an hour old is an outage', async (t) => {
  const { sql } = handles.db;
  await healthy();
  await sql`update app.worker_heartbeats set beat_at = now() - interval '5 minutes'`;
  let { report } = await status();
  t.is(component(report.components, 'worker')!.state, 'degraded');
  t.is(report.status, 'degraded');

  await healthy();
  await sql`select market.record_source_run('simulated', 'venue timeout')`;
  ({ report } = await status());
  t.like(component(report.components, 'source:simulated')!, { state: 'degraded', figures: { status: 'failing' } });
  t.false(JSON.stringify(report).includes('venue timeout'), 'no error text on a public page');
  t.is(report.status, 'degraded');

  await healthy();
  await sql`update market.data_sources set covered_until = now() - interval '10 minutes' where name = 'simulated'`;
  ({ report } = await status());
  t.is(component(report.components, 'source:simulated')!.state, 'degraded');

  await sql`update market.data_sources set covered_until = now() - interval '2 hours' where name = 'simulated'`;
  ({ report } = await status());
  t.is(component(report.components, 'source:simulated')!.state, 'outage');
  t.is(report.status, 'outage', 'the overall state is the worst component');

  // the same old data while the first run is still writing the history: starting, busy, not an outage
  await sql`update market.data_sources set last_run_at = null, covered_until = now() - interval '40 days' where name = 'simulated'`;
  ({ report } = await status());
  t.like(component(report.components, 'source:simulated')!, { state: 'busy', figures: { status: 'starting' } });
  t.not(report.status, 'outage');
});

test.serial('venues: one down degrades the exchanges source, all down is an outage', async (t) => {
  const { sql } = handles.db;
  await healthy();
  await sql`update market.data_sources set last_run_at = now(), last_success_at = now(), covered_until = date_trunc('minute', now()),
    venues = '{"binance": "up", "okx": "down"}' where name = 'exchanges'`;
  let { report } = await status();
  t.like(component(report.components, 'source:exchanges')!, { state: 'degraded', figures: { venues_up: 1, venues_down: 1 } });
  await sql`update market.data_sources set venues = '{"binance": "down", "okx": "down"}' where name = 'exchanges'`;
  ({ report } = await status());
  t.is(component(report.components, 'source:exchanges')!.state, 'outage');
});

test.serial('FX, sentiment, webhooks and e-mail: stale rates, no reading, a stuck backlog and a failure rate over half degrade', async (t) => {
  const { sql } = handles.db;
  await healthy();
  await sql`select market.record_source_run('ecb')`;
  await sql`insert into market.fx_rates (time, currency, rate, source) values (now() - interval '6 days', 'EUR', 0.9, 'ecb')`;
  let { report } = await status();
  t.like(component(report.components, 'fx')!, { state: 'degraded', figures: { source: 'ecb', demo: false } });
  await sql`insert into market.fx_rates (time, currency, rate, source) values (now() - interval '1 day', 'EUR', 0.9, 'ecb')`;
  ({ report } = await status());
  t.is(component(report.components, 'fx')!.state, 'operational');

  // no reading: starting in the first half hour after the first migration, degraded afterwards
  await sql`delete from market.sentiment_snapshots`;
  ({ report } = await status());
  t.like(component(report.components, 'sentiment')!, { state: 'busy', figures: { age_seconds: null } });
  t.is(report.status, 'busy');
  await sql`update app.migrations set applied_at = applied_at - interval '1 hour'`;
  ({ report } = await status());
  t.like(component(report.components, 'sentiment')!, { state: 'degraded', figures: { age_seconds: null } });

  const [endpoint] = await sql<{ id: string }[]>`
    insert into app.webhook_endpoints (owner, url, events, secret) values ('status', 'https://hooks.example/s', '{alarm.triggered}', 'x') returning id`;
  const deliveries = async (status: string, count: number, age = '1 minute') => {
    for (let i = 0; i < count; i++) {
      const [event] = await sql<{ id: string }[]>`insert into app.webhook_events (owner, event, data) values ('status', 'alarm.triggered', '{}') returning id`;
      await sql`insert into app.webhook_deliveries (endpoint_id, event_id, status, created_at) values (${endpoint!.id}, ${event!.id}, ${status}, now() - ${age}::interval)`;
    }
  };
  await deliveries('succeeded', 5);
  await deliveries('failed', 6);
  await deliveries('pending', 2);
  ({ report } = await status());
  t.like(component(report.components, 'webhooks')!, { state: 'degraded', figures: { backlog: 2, succeeded_24h: 5, failed_24h: 6, failure_rate_24h: 0.545 } });
  await sql`delete from app.webhook_deliveries where status = 'failed'`;
  ({ report } = await status());
  t.is(component(report.components, 'webhooks')!.state, 'operational');
  await deliveries('pending', 1, '2 hours');
  ({ report } = await status());
  t.like(component(report.components, 'webhooks')!, { state: 'degraded', figures: { backlog: 3 } });
  await sql`delete from app.webhook_endpoints where id = ${endpoint!.id}`;

  // an e-mail pending over an hour degrades e-mail notifications; bounces are counted
  await sql`insert into app.email_messages (owner, kind, recipient, data, status, created_at) values
    ('status', 'alarm.triggered', 'a@example.com', '{}', 'bounced', now()),
    ('status', 'alarm.triggered', 'a@example.com', '{}', 'pending', now() - interval '2 hours')`;
  ({ report } = await status());
  t.like(component(report.components, 'email')!, { state: 'degraded', figures: { backlog: 1, bounced_24h: 1, delivered_24h: 0 } });
  await sql`delete from app.email_messages where owner = 'status'`;
});

test.serial('a database that cannot answer: the report still answers, database outage', async (t) => {
  // a second app over a port nothing listens on
  const unreachable = createSql({ url: 'postgres://postgres@127.0.0.1:1/postgres', pooled: true, embedded: true }, { max: 1 });
  const api = await testApi({ ...handles.db, sql: unreachable });
  try {
    const response = await api.get('/status.json', null);
    t.is(response.status, 200);
    t.is(response.body.data.status, 'outage');
    t.deepEqual(response.body.data.components.map((c: Component) => [c.id, c.state]), [['api', 'operational'], ['database', 'outage']]);
    t.like(response.body.data.components[1].figures, { reachable: false });
  } finally {
    await api.close();
    await unreachable.end({ timeout: 1 });
  }
});

test.serial('a database behind a long statement is busy, not down: what runs, the last figures; /readyz likewise; then operational again', async (t) => {
  const { sql } = handles.db;
  await healthy();
  const api = await testApi(handles.db, { activity: () => [{ task: 'simulate_market', seconds: 42 }] });
  try {
    // a full answer first: the figures a busy database's report stands on
    t.is((await api.get('/status.json', null)).body.data.status, 'operational');
    t.is((await api.get('/readyz', null)).status, 200);
    // a long statement ahead of every other (the embedded database has one session; on a server the lock holds them)
    const long = sql.begin(async (tx) => {
      await tx`lock table app.worker_heartbeats in access exclusive mode`;
      await tx`select pg_sleep(4.5)`;
    });
    await sleep(300);
    const [json, page, ready] = await Promise.all([api.get('/status.json', null), api.get('/status', null), api.get('/readyz', null)]);
    await long;
    t.is(json.status, 200);
    t.is(json.body.data.status, 'busy');
    const database = component(json.body.data.components, 'database')!;
    t.like(database, { state: 'busy', figures: { reachable: true, busy: true, doing: ['simulate_market (running 42 s)'] } });
    t.truthy(database.figures.figures_as_of, 'the other components are the last full answer, with its time');
    t.like(component(json.body.data.components, 'worker'), { state: 'operational' });
    t.regex(page.body, /Busy: answers may be slow/);
    t.regex(page.body, /simulate_market \(running 42 s\)/);
    t.is(ready.status, 200, JSON.stringify(ready.body));
    t.like(ready.body.checks, { database: { ok: true, busy: true, doing: ['simulate_market (running 42 s)'] }, migrations: { ok: true } });
    // the statement done, the full answer again
    t.is((await api.get('/status.json', null)).body.data.status, 'operational');
  } finally {
    await api.close();
  }
});

browserTest('the status page in Chromium: the overall state, each component and its state, refreshing itself', async (t) => {
  const { sql } = handles.db;
  await healthy();
  await sql`update app.worker_heartbeats set beat_at = now() - interval '5 minutes'`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    const response = await page.goto(`${handles.api.base}/status`);
    t.is(response?.status(), 200);
    t.is(await page.title(), 'Status · market-data-api');
    t.is(await page.locator('#overall').innerText(), 'Partially degraded service');
    const rows = await page.locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('td')!.textContent]));
    t.deepEqual(rows, [
      ['API', 'Operational'], ['Database', 'Operational'], ['Job worker', 'Degraded'], ['Market source: simulated', 'Operational'],
      ['FX rates', 'Operational'], ['Sentiment readings', 'Operational'], ['Webhook delivery', 'Operational'], ['E-mail notifications', 'Operational'],
    ]);
    // what a person sees: the state is coloured, and the figures are readable text
    const color = await page.locator('tr[data-component="worker"] td.degraded').evaluate((td) => getComputedStyle(td).color);
    t.is(color, 'rgb(154, 103, 0)');
    t.regex(await page.locator('tr[data-component="worker"]').innerText(), /fresh workers: 0/);
    // it refreshes itself every 30 s, and the reader can stop that (WCAG 2.2.1; a meta refresh could not be stopped)
    t.is(await page.locator('body').getAttribute('data-refresh'), '30');
    const toggle = page.getByRole('button', { name: 'Stop refreshing' });
    t.true(await toggle.isVisible(), 'the script runs under the page\'s CSP and shows the button');
    await toggle.click();
    t.is(await page.locator('#refresh-note').innerText(), 'automatic refresh stopped');
    t.true(await page.getByRole('button', { name: 'Refresh now' }).isVisible());
    await screenshot(t, page, 'status', 'status.png');
  } finally {
    await browser.close();
  }
});
