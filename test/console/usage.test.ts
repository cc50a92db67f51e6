// The console's usage page (issue 32, Usage): a key's requests (answers, a 404, a 422 and rate-limit
// 429s) are counted per endpoint and status class by the admission flush, shown on the page and in
// the CSV, with the quota figures of the X-Quota-* headers; another account sees nothing of them; the
// analyst calls none of the functions; the rollup is the same with batching on and off.
import test from 'ava';
import { chromium } from 'playwright-core';
import postgres from 'postgres';
import { browserTest, checkPage, CHROMIUM, screenshots } from '../helpers/browser.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { awayFromMinuteBoundary, testApi, type TestApi, type TestResponse } from '../helpers/http.ts';
import { signedInAccount, type ConsolePage } from '../helpers/console.ts';
import { poll } from '../../dev/wait.ts';
import { createKey } from '../../src/keys.ts';
import { csv } from '../../src/console/usage.ts';
import { responseClass } from '../../src/http/admission-batch.ts';

let db: TestDatabase;
/** batched admission (ADMISSION_FLUSH_MS 200, the default) */
let api: TestApi;
/** app.admit per request (ADMISSION_FLUSH_MS=0) */
let exact: TestApi;
let accounts = 0;
const nextEmail = () => `usage${++accounts}@example.com`;

test.before(async () => {
  db = await testDatabase();
  // a plan of 3 requests a minute: the fourth is refused with 429
  await db.sql`insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap) values ('usage-small', 90, 1000, 3, 100)`;
  api = await testApi(db);
  exact = await testApi(db, { env: { ADMISSION_FLUSH_MS: '0' } });
});
test.after.always(async () => {
  await api?.close();
  await exact?.close();
  await db?.close();
});

const today = () => new Date().toISOString().slice(0, 10);

/** An account signed in to the console, and a named key of it on the small plan. */
async function accountWithKey() {
  const { owner, client } = await signedInAccount(db.sql, api.base, nextEmail());
  const made = await createKey(db.sql, { plan: 'usage-small' as never, owner, scope: 'data-api', name: 'probe <b>' });
  const [row] = await db.sql<{ id: string; prefix: string }[]>`select id::text, prefix from app.api_keys where owner = ${owner}`;
  return { owner, client, key: made.key, keyId: row!.id, prefix: row!.prefix };
}

/** Two answers, a 404 (no such coin: counted), two 429s (over 3 a minute), a 422 (bad input: not counted, not refused). */
async function makeRequests(on: TestApi, key: string): Promise<TestResponse[]> {
  await awayFromMinuteBoundary(15);
  const responses: TestResponse[] = [];
  for (const path of ['/api/v1/ping', '/api/v1/ping', '/api/v1/coins/no-such-coin-anywhere', '/api/v1/ping', '/api/v1/ping', '/api/v1/coins?per_page=nonsense']) {
    responses.push(await on.get(path, key));
  }
  return responses;
}

const EXPECTED = [
  [today(), 'GET /api/v1/coins', '4xx', '1'],
  [today(), 'GET /api/v1/coins/{slug}', '4xx', '1'],
  [today(), 'GET /api/v1/ping', '2xx', '2'],
  [today(), 'GET /api/v1/ping', '429', '2'],
];

const rollup = async (keyId: string) =>
  (await db.sql<{ day: string; endpoint: string; status_class: string; requests: string }[]>`
    select day::text, endpoint, status_class, requests::text from app.usage_daily where key_id = ${keyId}`)
    .map((row) => [row.day, row.endpoint, row.status_class, row.requests]).sort();

/** The endpoint table's rows: endpoint, all, 2xx, 3xx, 4xx, 429, 5xx. */
function endpointRows(text: string): string[][] {
  const table = /<table id="endpoints">([\s\S]*?)<\/table>/.exec(text)?.[1] ?? '';
  return [...table.matchAll(/<tr><td data-label="Endpoint"><code>([^<]*)<\/code><\/td>((?:<td[^>]*>\d+<\/td>)+)<\/tr>/g)]
    .map((match) => [match[1]!.replaceAll('&#123;', '{').replaceAll('&#125;', '}'), ...[...match[2]!.matchAll(/>(\d+)</g)].map((cell) => cell[1]!)]);
}

const cell = (text: string, name: string) => new RegExp(`class="${name}"[^>]*>([^<]+)<`).exec(text)?.[1];

test.serial('a key\'s requests on the page and in the CSV: per endpoint and status class, 429 refusals, the X-Quota-* figures', async (t) => {
  const { client, key, keyId, prefix } = await accountWithKey();
  const responses = await makeRequests(api, key);
  t.deepEqual(responses.map((r) => r.status), [200, 200, 404, 429, 429, 422]);
  const last = responses.at(-1)!;

  const expectedTable = [
    ['GET /api/v1/ping', '4', '2', '0', '0', '2', '0'],
    ['GET /api/v1/coins', '1', '0', '0', '1', '0', '0'],
    ['GET /api/v1/coins/{slug}', '1', '0', '0', '1', '0', '0'],
  ];
  // the flush writes within ADMISSION_FLUSH_MS (200 ms): the page shows them within a second or two,
  // the rows, the quota counter and the refusals each as its write lands (on a busy machine, in any order)
  const page = await poll(
    () => client.get(`/console/usage?key=${keyId}`),
    (p) => endpointRows(p.text).length === 3 && cell(p.text, 'quota-used') === last.headers.get('x-quota-used') && /id="refusals"[^<]*<strong>2<\/strong>/.test(p.text),
    { timeoutMs: 5000, everyMs: 50 },
  );
  t.is(page.status, 200);
  t.deepEqual(endpointRows(page.text).sort(), expectedTable.sort());
  t.deepEqual(await rollup(keyId), EXPECTED.toSorted());

  // the quota figures are the last response's headers
  t.is(cell(page.text, 'quota-used'), last.headers.get('x-quota-used')!);
  t.is(cell(page.text, 'quota-remaining'), last.headers.get('x-quota-remaining')!);
  t.is(cell(page.text, 'quota-limit'), last.headers.get('x-quota-limit')!);
  const reset = /class="quota-reset" datetime="([^"]+)"/.exec(page.text)?.[1];
  t.is(Date.parse(reset!) / 1000, Number(last.headers.get('x-quota-reset')));
  t.is(last.headers.get('x-quota-used'), '3', 'two answers and the 404');

  t.regex(page.text, /<p id="refusals">Refused with 429[^<]*<strong>2<\/strong> this month, <strong>2<\/strong> in the last 30 days/);
  // the key's name is escaped; the picker selects it
  t.true(page.text.includes(`<option value="${keyId}" selected>probe &lt;b&gt; (${prefix})</option>`));
  t.false(page.text.includes('probe <b>'));

  // the chart: a module with the page's nonce, the series in data attributes, a summary as its name; no inline script
  const nonce = /nonce="([^"]+)"/.exec(page.text)![1];
  t.true(page.text.includes(`<script type="module" src="/console/assets/usage-chart.js" nonce="${nonce}">`));
  t.is([...page.text.matchAll(/<script(?![^>]*\ssrc=)[^>]*>/g)].length, 0);
  t.regex(page.text, new RegExp(`role="img" aria-label="Requests per day over the last 30 days: 6 in all, most on ${today()} \\(6\\)`));
  const series = JSON.parse(/data-series="([^"]+)"/.exec(page.text)![1]!.replaceAll('&quot;', '"'));
  t.deepEqual(Object.fromEntries(Object.entries(series as Record<string, number[]>).map(([name, days]) => [name, days.at(-1)])), { '2xx': 2, '3xx': 0, '4xx': 2, '429': 2, '5xx': 0 });
  t.is((series['2xx'] as number[]).length, 30);
  // the daily table has today's numbers without script
  t.regex(page.text, new RegExp(`<tr><td data-label="Day">${today()}</td><td data-label="All">6</td><td data-label="2xx">2</td><td data-label="3xx">0</td><td data-label="4xx">2</td><td data-label="429">2</td>`));

  for (const [asset, type] of [['usage-chart.js', 'text/javascript'], ['uplot.esm.js', 'text/javascript'], ['uplot.min.css', 'text/css']] as const) {
    const served = await fetch(`${api.base}/console/assets/${asset}`);
    t.is(served.status, 200, asset);
    t.true(served.headers.get('content-type')!.startsWith(type), asset);
  }

  const download = await client.get(`/console/usage.csv?key=${keyId}`);
  t.is(download.status, 200);
  t.true(download.headers.get('content-type')!.startsWith('text/csv'));
  t.regex(download.headers.get('content-disposition')!, new RegExp(`^attachment; filename="usage-key-${keyId}-\\d{4}-\\d{2}-\\d{2}\\.csv"$`));
  const [header, ...lines] = download.text.trimEnd().split('\r\n');
  t.is(header, 'day,endpoint,status_class,requests');
  t.deepEqual(lines.sort(), EXPECTED.map((row) => row.join(',')).sort());

  // the account's view adds up its keys: one key here, the same rows
  const account = await client.get('/console/usage');
  t.is(account.status, 200);
  t.deepEqual(endpointRows(account.text).sort(), expectedTable.sort());
  t.true(account.text.includes('<option value="" selected>All keys of the account</option>'));
  t.deepEqual((await client.get('/console/usage.csv')).text.trimEnd().split('\r\n').slice(1).sort(), lines.sort());

  // linked from the keys page
  t.true((await client.get('/console/keys')).text.includes(`<a href="/console/usage?key=${keyId}" aria-label="Usage of ${prefix}">Usage</a>`));
});

test.serial('another account sees nothing of a key that is not its own', async (t) => {
  const { keyId, key, prefix } = await accountWithKey();
  await api.get('/api/v1/ping', key);
  await api.app.admission!.flush();
  t.true((await rollup(keyId)).length > 0);
  const { owner: other, client } = await signedInAccount(db.sql, api.base, nextEmail());
  for (const path of [`/console/usage?key=${keyId}`, `/console/usage.csv?key=${keyId}`, '/console/usage?key=12abc', '/console/usage?key=99999999']) {
    const page: ConsolePage = await client.get(path);
    t.is(page.status, 404, path);
    t.regex(page.text, /You have no working key with this id/, path);
    t.false(page.text.includes(prefix), path);
    t.false(page.text.includes('/api/v1/ping'), path);
  }
  // and the functions themselves answer nothing for it
  for (const fn of ['console_usage_quota', 'console_usage_days', 'console_usage_endpoints', 'console_usage_refusals', 'console_usage_rows']) {
    const rows = await db.sql.unsafe(`select * from app.${fn}($1, $2)`, [other, keyId]);
    t.is(rows.length, 0, fn);
  }
  // an account without keys: an empty page, not an error
  const empty = await client.get('/console/usage');
  t.is(empty.status, 200);
  t.regex(empty.text, /No working key/);
  t.regex(empty.text, /No request this month/);
});

test.serial('the rollup is the same with ADMISSION_FLUSH_MS=0 (app.admit and app.record_response per request)', async (t) => {
  const { key, keyId, client } = await accountWithKey();
  const responses = await makeRequests(exact, key);
  t.deepEqual(responses.map((r) => r.status), [200, 200, 404, 429, 429, 422]);
  t.deepEqual(await poll(() => rollup(keyId), (rows) => rows.length === 4 && rows.every((row, i) => row[3] === EXPECTED.toSorted()[i]![3]), { timeoutMs: 2000, everyMs: 50 }), EXPECTED.toSorted());
  const page = await client.get(`/console/usage?key=${keyId}`);
  t.is(cell(page.text, 'quota-used'), responses.at(-1)!.headers.get('x-quota-used')!);
});

test.serial('the analyst calls none of the usage functions and reads no rollup', async (t) => {
  const analyst = postgres(db.urlAs('analyst'), { prepare: false, max: 1, onnotice: () => {} });
  try {
    for (const call of [
      "select * from app.console_usage_quota('x', null)", "select * from app.console_usage_days('x', null)",
      "select * from app.console_usage_endpoints('x', null)", "select * from app.console_usage_refusals('x', null)",
      "select * from app.console_usage_rows('x', null)", "select * from app.console_usage_key_ids('x', null)",
      'select * from app.key_quota(1)', "select app.record_response(1, 'x', '2xx')", 'select * from app.usage_daily',
    ]) {
      const error = await t.throwsAsync(analyst.unsafe(call).simple(), undefined, call);
      t.is((error as { code?: string }).code, '42501', call);
    }
  } finally {
    await analyst.end();
  }
});

browserTest('in Chromium: the chart drawn under the CSP, the day table folded beside it, accessible, nothing sideways at 375 px', async (t) => {
  const { client, key, keyId } = await accountWithKey();
  t.is((await api.get('/api/v1/ping', key)).status, 200);
  // within ~2 s of the request (ADMISSION_FLUSH_MS 200 ms): what the lead's browser test relies on
  await poll(() => client.get(`/console/usage?key=${keyId}`), (p) => endpointRows(p.text).length === 1, { timeoutMs: 2000, everyMs: 50 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const errors: string[] = [];
  try {
    const shot = screenshots('usage');
    for (const width of [375, 1024]) {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      await context.addCookies([...client.jar].map(([name, value]) => ({ name, value, url: api.base })));
      const page = await context.newPage();
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`${message.text()} ${message.location().url}`);
      });
      await page.goto(`${api.base}/console/usage?key=${keyId}`);
      await page.locator('#usage-chart canvas').waitFor();
      t.false(await page.locator('#usage-days').evaluate((details) => (details as HTMLDetailsElement).open), 'the table folds once the chart is drawn');
      t.truthy(await page.getByRole('img', { name: /Requests per day over the last 30 days: 1 in all/ }).count());
      await checkPage(t, page, `${width} px`);
      await shot(t, page, `usage-${width}.png`);
      await context.close();
    }
    t.deepEqual(errors, [], 'no CSP violation or script error');
  } finally {
    await browser.close();
  }
});

test('status classes and CSV quoting', (t) => {
  t.deepEqual([200, 204, 304, 404, 422, 429, 500, 503].map(responseClass), [0, 0, 1, 2, 2, 3, 4, 4]);
  t.is(csv([['day', 'endpoint'], ['2025-01-01', 'a,b'], ['x"y', 'line\nbreak'], ['plain', '']]), 'day,endpoint\r\n2025-01-01,"a,b"\r\n"x""y","line\nbreak"\r\nplain,\r\n');
});
