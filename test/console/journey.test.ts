// The console in Debian's Chromium: sign up (CONSOLE_SIGNUP=open) → the verification e-mail caught
// by the loopback SMTP mailbox → verify → sign in → create a Data API key → /api/v1/ping with it →
// revoke it → 401. On every page: axe-core finds no serious or critical violation, nothing scrolls
// sideways at 375 px, the CSP blocks nothing of the page's own; a screenshot of each is written.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { chromium, type Page } from 'playwright-core';
import { sendEmail } from '../../jobs/send_email.ts';
import { startMailbox, type Mailbox } from '../../dev/mailbox.ts';
import { poll } from '../../dev/wait.ts';
import { browserTest, checkPage, CHROMIUM } from '../helpers/browser.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { PASSWORD } from '../helpers/console.ts';

let db: TestDatabase;
let api: TestApi;
let mailbox: Mailbox;
let runner: Runner;

test.before(async () => {
  db = await testDatabase();
  mailbox = await startMailbox();
  const mail = { SMTP_URL: mailbox.url, MAIL_FROM: 'Console <console@example.com>' };
  api = await testApi(db, { env: { ...mail, CONSOLE_SIGNUP: 'open' } });
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 1, pollInterval: 50, logger: new Logger(() => () => {}),
    taskList: { send_email: sendEmail({ ...mail, SMTP_TIMEOUT_MS: 2_000, EMAIL_RETRY_BASE_MS: 1_000, PUBLIC_URL: api.base, HOST: '127.0.0.1', PORT: 0 }) },
  });
});
test.after.always(async () => {
  await runner?.stop();
  await api?.close();
  await mailbox?.stop();
  await db?.close();
});

browserTest('the journey from sign-up to a revoked key, every page accessible and narrow', async (t) => {
  const shots = mkdtempSync(join(tmpdir(), 'mdapi-console-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const blocked: string[] = [];
  let shot = 0;
  /** axe, the 375 px width, and a screenshot of the page as it is now */
  const check = async (page: Page, name: string) => {
    await checkPage(t, page, name);
    const path = join(shots, `${String(++shot).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    t.log(`screenshot: ${path}`);
  };
  try {
    // a context of its own: axe's playwright binding needs one
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(`${message.text()} ${message.location().url}`);
    });
    const email = 'journey@example.com';

    await page.goto(`${api.base}/console/sign-up`);
    await check(page, 'sign-up');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Make account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await check(page, 'sign-up-sent');

    await mailbox.waitFor(1, 10_000);
    const mail = mailbox.accepted.find((m) => m.envelope.to.includes(email))!;
    t.is(mail.headers.subject, 'Confirm your e-mail address');
    // the link's base is PUBLIC_URL, else HOST:PORT; the test's API listens on a port of its own
    const link = /http:\/\/\S+(\/console\/verify\?token=[\w-]+)/.exec(mail.text)![1]!;
    await page.goto(`${api.base}${link}`);
    await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
    await check(page, 'verified');

    // the keys page asked for while signed out: sign-in, then back to it
    await page.goto(`${api.base}/console/keys`);
    t.regex(page.url(), /\/console\/sign-in\?next=%2Fconsole%2Fkeys$/);
    await check(page, 'sign-in');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Data API keys' }).waitFor();
    t.regex(page.url(), /\/console\/keys$/);
    await check(page, 'keys-empty');

    await page.getByLabel('Name').fill('journey key');
    await page.getByLabel('Plan').selectOption('free');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key-value').textContent())!;
    t.regex(key, /^mdk_[\w-]{43}$/);
    t.true(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'the console module ran under the CSP');
    await check(page, 'key-created');
    t.is((await api.get('/api/v1/ping', key)).status, 200);

    await page.getByRole('button', { name: `Revoke ${key.slice(0, 12)}` }).click();
    await page.getByText('Key revoked').waitFor();
    await check(page, 'key-revoked');
    const refused = await poll(() => api.get('/api/v1/ping', key), (r) => r.status !== 200, { timeoutMs: 2_000, everyMs: 20 });
    t.is(refused.status, 401);

    await page.goto(`${api.base}/console/account`);
    await page.getByText(`Signed in as ${email}`).waitFor();
    await check(page, 'account');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.goto(`${api.base}/console/reset`);
    await check(page, 'reset');
    t.deepEqual(blocked, [], 'no CSP violation or script error');
  } finally {
    await browser.close();
  }
});
