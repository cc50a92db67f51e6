// Every console input, enumerated rather than listed: the routes (method and path) come from the
// composed console router's layers, and the fields each one reads from the forms of the pages a
// person sees (<input>, <select> and <textarea> names), crawled signed out, as a user holding one
// of everything (keys of each section, a widget key, webhook endpoints with a delivery, alarms, a
// push browser) and as an admin; query names from every console URL met (links, GET forms,
// redirects, the e-mailed and printed links). Each field, query parameter and path parameter is
// sent NUL, invalid UTF-8, 10 000 characters and repeated: never a 5xx; NUL and invalid UTF-8 are a
// 422 console page naming the field (the API's rule, src/http/validation.ts). A POST route that no
// page offers a form for fails the test, so a new form is covered without editing it.
import test from 'ava';
import type { Layer } from '@koa/router';
import { chromium } from 'playwright-core';
import { startMailbox } from '../../dev/mailbox.ts';
import { createAccount, inviteAccount } from '../../src/console/accounts.ts';
import { consoleRouter } from '../../src/console/router.ts';
import type { Sql } from '../../src/db/client.ts';
import { browserTest, checkPage, CHROMIUM, screenshot } from '../helpers/browser.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { accountWithEverything, ConsoleClient, consoleCoin, crawl, everythingEnv, PASSWORD, signedInAccount, type Found } from '../helpers/console.ts';

const mailbox = await startMailbox();
const ENV = everythingEnv(mailbox.url);
let db: TestDatabase;
let api: TestApi;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db, { env: ENV });
  await consoleCoin(db.sql, 'console-forms');
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
  await mailbox.stop();
});

const encode = encodeURIComponent;
/** The bad values, each as the encoded name=value pairs sent in place of the field's own. */
const BAD: Record<string, (name: string, value: string) => string> = {
  // inside text that passes its format otherwise: after the first character (a@example.test), before the last (a URL's path)
  'a NUL': (name, value) => `${encode(name)}=${encode(value.slice(0, 1))}%00${encode(value.slice(1))}`,
  'a NUL near the end': (name, value) => `${encode(name)}=${encode(value.slice(0, -1))}%00${encode(value.slice(-1))}`,
  'invalid UTF-8': (name, value) => `${encode(name)}=${encode(value.slice(0, 1))}%FF%FE${encode(value.slice(1))}`,
  '10 000 characters': (name) => `${encode(name)}=${'x'.repeat(10_000)}`,
  'a repeated field': (name, value) => `${encode(name)}=x&${encode(name)}=${encode(value)}`,
};
const PATH_BAD: Record<string, string> = { 'a NUL': 'a%00b', 'a NUL near the end': 'ab%00', 'invalid UTF-8': 'a%FF%FEb', '10 000 characters': 'x'.repeat(10_000) };
/** Refused by the one text rule: a 422 console page with the field named. */
const TEXT_RULE = new Set(['a NUL', 'a NUL near the end', 'invalid UTF-8']);

async function send(client: ConsoleClient, method: string, path: string, body?: string) {
  const headers: Record<string, string> = { 'user-agent': client.userAgent, cookie: [...client.jar].map(([name, value]) => `${name}=${value}`).join('; ') };
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  const response = await fetch(`${client.base}${path}`, { method, headers, body, redirect: 'manual' });
  return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
}

test('every console form field, query parameter and path parameter: NUL, invalid UTF-8, 10 000 characters and repeated values get no 5xx; NUL and invalid UTF-8 a 422 console page naming the field', async (t) => {
  const { owner, client: user } = await accountWithEverything(db.sql, api.base);
  const { client: admin } = await signedInAccount(db.sql, api.base, 'fuzz-admin@example.com', 'fuzz admin', true);
  const anonymous = new ConsoleClient(api.base, 'fuzz anonymous');

  // the links a person is sent: printed by the CLI (set a password, an invite) and e-mailed (confirm an address, reset a password)
  const { path: setPassword } = await db.sql.begin((tx) => createAccount(tx as unknown as Sql, { email: 'fuzz-printed@example.com' }));
  const invite = await inviteAccount(db.sql, 'fuzz-invited@example.com');
  const signUp = new ConsoleClient(api.base, 'fuzz sign-up');
  await signUp.get('/console/sign-up');
  t.is((await signUp.post('/console/sign-up', { email: 'fuzz-new@example.com', password: PASSWORD })).status, 200);
  await signUp.get('/console/reset');
  t.is((await signUp.post('/console/reset', { email: 'fuzz-user@example.com' })).status, 200);
  await mailbox.waitFor(2);
  const mailed = mailbox.accepted.flatMap((mail) => [...mail.text.matchAll(/https?:\/\/[^\s/]+(\/console\/[^\s]+)/g)].map(([, path]) => path!));
  t.true(mailed.length >= 2, 'the e-mailed links');

  const found: Found = { forms: [], urls: new Map() };
  await crawl(anonymous, ['/console/', '/console/sign-in', '/console/sign-up', setPassword, invite, ...mailed.filter((path) => !path.startsWith('/console/verify'))], found, t);
  await crawl(user, ['/console/'], found, t);
  await crawl(admin, ['/console/', `/console/admin/accounts/${encode(owner)}`], found, t);
  // the verification link last: opening it uses it up
  for (const path of mailed.filter((one) => one.startsWith('/console/verify'))) found.urls.set(path, anonymous);

  const router = consoleRouter({ sql: db.sql, config: db.config(ENV) });
  const routes = (router.stack as Layer[]).filter((layer) => layer.methods.length > 0 && !String(layer.path).startsWith('/console/assets/'));
  t.true(routes.length > 30, `${routes.length} routes`);
  const queryNames = (layer: Layer) => new Set([...found.urls.keys()].flatMap((url) => {
    const parsed = new URL(url, 'http://console.test');
    return layer.match(parsed.pathname) ? [...parsed.searchParams.keys()] : [];
  }));

  const failures: string[] = [];
  const missing: string[] = [];
  let requests = 0;
  /** `beside`: a field to send again, its error beside its input (a path parameter, and the CSRF token, are named only) */
  const expect = async (kind: string, field: string, client: ConsoleClient, method: string, path: string, body?: string, beside = field !== 'csrf') => {
    const answer = await send(client, method, path, body);
    requests++;
    const what = `${method} ${path.slice(0, 80)} ${field} as ${kind}`;
    if (answer.status >= 500) failures.push(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    else if (TEXT_RULE.has(kind) && !(answer.status === 422 && answer.type.startsWith('text/html') && answer.text.includes(`<strong>${field}</strong>`))) {
      failures.push(`${what}: ${answer.status} ${answer.type}, not a 422 console page naming ${field}`);
    } else if (TEXT_RULE.has(kind) && beside && !answer.text.includes(`aria-describedby="f-${field}-error"`)) {
      failures.push(`${what}: the error is not beside a field ${field} to send again`);
    }
  };
  for (const layer of routes) {
    const method = layer.methods.includes('POST') ? 'POST' : 'GET';
    const paramNames = layer.paramNames.map((param) => String(param.name));
    if (method === 'POST') {
      const form = found.forms.find((one) => one.method === 'POST' && layer.match(one.path));
      if (!form) {
        missing.push(`POST ${layer.path}`);
        continue;
      }
      const pairs = [...form.fields];
      for (const [name] of pairs) {
        for (const [kind, bad] of Object.entries(BAD)) {
          const body = pairs.map(([other, value]) => (other === name ? bad(name, value) : `${encode(other)}=${encode(value)}`)).join('&');
          await expect(kind, name, form.client, 'POST', form.path, body);
        }
      }
      for (const name of paramNames) {
        for (const [kind, value] of Object.entries(PATH_BAD)) {
          await expect(kind, name, form.client, 'POST', paramPath(layer, form.path, name, value), pairs.map(([other, v]) => `${encode(other)}=${encode(v)}`).join('&'), false);
        }
      }
    } else {
      const [sample, client] = [...found.urls].find(([url]) => layer.match(new URL(url, 'http://console.test').pathname)) ?? [String(layer.path).replace(/:\w+/g, '1'), admin];
      const samplePath = new URL(sample, 'http://console.test').pathname;
      for (const name of [...queryNames(layer), 'unlisted']) {
        for (const [kind, bad] of Object.entries(BAD)) await expect(kind, name, client, 'GET', `${samplePath}?${bad(name, new URL(sample, 'http://console.test').searchParams.get(name) || 'a')}`);
      }
      for (const name of paramNames) {
        for (const [kind, value] of Object.entries(PATH_BAD)) await expect(kind, name, client, 'GET', paramPath(layer, samplePath, name, value), undefined, false);
      }
    }
  }
  t.deepEqual(missing, [], 'POST routes that no page offers a form for: make the test reach the page that shows it');
  t.deepEqual(failures, []);
  t.log(`${routes.length} routes, ${found.forms.length} forms met, ${requests} requests`);
  // the fuzzing changed nothing it should not have: both accounts still signed in
  t.is((await user.get('/console/keys')).status, 200);
  t.is((await admin.get('/console/admin/accounts')).status, 200);
});

browserTest('the page refusing unreadable text in Chromium: the error beside the field to send again, accessible, 375 px wide', async (t) => {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    await page.goto(`${api.base}/console/sign-in?next=%2Fconsole%2Fkeys%00`);
    await page.getByRole('heading', { name: 'This was not read' }).waitFor();
    t.regex(await page.locator('main').innerText(), /Error: next: Must not contain the NUL character \(U\+0000\)\./);
    // beside the field, to send again corrected
    const next = page.getByLabel('next');
    t.is(await next.getAttribute('aria-invalid'), 'true');
    t.is(await next.inputValue(), '/console/keys\uFFFD');
    await checkPage(t, page, 'refused text');
    await screenshot(t, page, 'console', 'refused-text.png');
    await page.getByRole('link', { name: 'Open the page again' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    // the sign-in form with a NUL in the address (set by script: no keyboard types one), sent as Chromium sends forms
    await page.locator('#f-email').evaluate((input: HTMLInputElement) => {
      input.value = 'a\u0000@example.test';
      input.form!.noValidate = true;
    });
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'This was not read' }).waitFor();
    t.is(await page.getByLabel('email').getAttribute('aria-invalid'), 'true');
    t.is(await page.getByLabel('email').inputValue(), 'a\uFFFD@example.test');
    t.is(await page.getByLabel('password').inputValue(), '', 'a password is never written back');
    await checkPage(t, page, 'refused sign-in');
    await screenshot(t, page, 'console', 'refused-sign-in.png');
    // corrected and sent again: read, and answered as the sign-in form answers (no such account)
    await page.getByLabel('email').fill('nobody@example.test');
    await page.getByLabel('password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Send again' }).click();
    await page.getByText('The e-mail address or the password is wrong.').waitFor();
  } finally {
    await browser.close();
  }
});

browserTest('a rotation with a grace not offered, in Chromium: said beside that key\'s choice, accessible, 375 px wide', async (t) => {
  await signedInAccount(db.sql, api.base, 'fuzz-browser@example.com');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    await page.goto(`${api.base}/console/sign-in?next=%2Fconsole%2Fkeys`);
    await page.getByLabel('E-mail address').fill('fuzz-browser@example.com');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Name').fill('server');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key-value').waitFor();
    // a choice the page does not offer, as an old page or a hand-made post would send it
    await page.locator('select[name=grace]').evaluate((select: HTMLSelectElement) => {
      select.options[0]!.value = '9';
      select.selectedIndex = 0;
    });
    await page.getByRole('button', { name: /^Rotate/ }).click();
    await page.getByText(/Error: Choose how long the old key keeps working/).waitFor();
    t.is(await page.locator('select[name=grace]').getAttribute('aria-invalid'), 'true');
    await checkPage(t, page, 'rotate refused');
    await screenshot(t, page, 'console', 'rotate-grace-refused.png');
  } finally {
    await browser.close();
  }
});

/** A concrete path of `layer` (as `sample`) with the parameter `name` replaced by `value`. */
function paramPath(layer: Layer, sample: string, name: string, value: string): string {
  const captures = layer.captures(sample);
  const names = layer.paramNames.map((param) => String(param.name));
  return String(layer.path).replace(/:(\w+)/g, (_: string, param: string) => (param === name ? value : (captures[names.indexOf(param)] ?? '1')));
}
