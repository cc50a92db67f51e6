// The console's whole journey in Debian's Chromium, on the demo market (CONSOLE_SIGNUP=open): sign up
// → the verification e-mail caught by the loopback SMTP mailbox → verify → sign in → two Data API
// keys → /api/v1/ping with one → the usage page shows that request → an alarm → the market moves
// and the alarm evaluation of the tick triggers it → the page shows it triggered and its e-mail
// arrives → a webhook endpoint on a loopback receiver → a test event received with a valid
// signature → the delivery log shows it → rotate, then revoke the key → the API refuses both
// secrets. Then the operator: the first admin sets its password from the printed link, finds the
// account, disables it → the account's other key gets 401. On every page: axe-core finds no serious
// or critical violation, nothing scrolls sideways at 375 px, the CSP blocks nothing; a screenshot
// of each is written (the test log names each file).
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { chromium, type Page } from 'playwright-core';
import { sendEmail } from '../../jobs/send_email.ts';
import { deliverWebhook } from '../../jobs/deliver_webhook.ts';
import { verifyWebhook } from '../../examples/verify-webhook.ts';
import { startMailbox, type Mailbox } from '../../dev/mailbox.ts';
import { startReceiver, type Receiver } from '../../dev/webhook-receiver.ts';
import { poll, until } from '../../dev/wait.ts';
import { createAccount } from '../../src/console/accounts.ts';
import { tokenHash } from '../../src/console/session.ts';
import type { Sql } from '../../src/db/client.ts';
import { browserTest, checkPage, CHROMIUM, screenshots } from '../helpers/browser.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { demoDatabase } from '../helpers/demo.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { PASSWORD } from '../helpers/console.ts';

let db: TestDatabase;
let api: TestApi;
let mailbox: Mailbox;
let receiver: Receiver;
let runner: Runner;

test.before(async () => {
  db = await demoDatabase();
  mailbox = await startMailbox();
  receiver = await startReceiver();
  const mail = { SMTP_URL: mailbox.url, MAIL_FROM: 'Console <console@example.com>' };
  api = await testApi(db, { env: { ...mail, CONSOLE_SIGNUP: 'open', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  runner = await run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 2, pollInterval: 50, logger: new Logger(() => () => {}),
    taskList: {
      send_email: sendEmail({ ...mail, SMTP_TIMEOUT_MS: 2_000, EMAIL_RETRY_BASE_MS: 1_000, PUBLIC_URL: api.base, HOST: '127.0.0.1', PORT: 0 }),
      deliver_webhook: deliverWebhook({ WEBHOOK_TIMEOUT_MS: 5_000, WEBHOOK_ALLOW_PRIVATE_TARGETS: true, WEBHOOK_RETRY_BASE_MS: 60_000 }),
    },
  });
});
test.after.always(async () => {
  await runner?.stop();
  await api?.close();
  await receiver?.close();
  await mailbox?.stop();
  await db?.close();
});

browserTest('the journey from sign-up to a disabled account, every page accessible and narrow', async (t) => {
  const shot = screenshots('console', { numbered: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const blocked: string[] = [];
  /** axe, the 375 px width, and a screenshot of the page as it is now */
  const check = async (page: Page, name: string) => {
    await checkPage(t, page, name);
    await shot(t, page, `${name}.png`);
  };
  /** a page of its own context (axe's playwright binding needs one), 375 px wide, its script errors and CSP refusals kept */
  const newPage = async () => {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(`${message.text()} ${message.location().url}`);
    });
    return page;
  };
  const refusedWithin = async (key: string, ms: number) =>
    (await poll(() => api.get('/api/v1/ping', key), (r) => r.status !== 200, { timeoutMs: ms, everyMs: 20 })).status;
  try {
    const page = await newPage();
    const email = 'journey@example.com';

    // ---- sign up, confirm the address, sign in
    await page.goto(`${api.base}/console/sign-up`);
    await check(page, 'sign-up');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Make account' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    await check(page, 'sign-up-sent');
    // sent after the answer
    const verification = (await poll(() => mailbox.accepted.find((m) => m.envelope.to.includes(email)), Boolean))!;
    t.is(verification.headers.subject, 'Confirm your e-mail address');
    // the link's base is PUBLIC_URL, else HOST:PORT; the test's API listens on a port of its own
    const link = /http:\/\/\S+(\/console\/verify\?token=[\w-]+)/.exec(verification.text)![1]!;
    // its token is stored just after the mail server accepted it
    const token = new URL(link, api.base).searchParams.get('token')!;
    await poll(() => db.sql`select from app.console_tokens where token_hash = ${tokenHash(token)}`, (rows) => rows.length > 0);
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
    await check(page, 'keys-empty');

    // ---- two keys: one to use, rotate and revoke; the other for the operator's part
    const createKey = async (name: string) => {
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Plan').selectOption('free');
      await page.getByRole('button', { name: 'Create key' }).click();
      return (await page.locator('#new-key-value').textContent())!;
    };
    const other = await createKey('other key');
    const key = await createKey('journey key');
    t.regex(key, /^mdk_[\w-]{43}$/);
    t.true(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'the console module ran under the CSP');
    await check(page, 'key-created');
    t.is((await api.get('/api/v1/ping', key)).status, 200);

    // ---- usage: the request just made, once the admission flush has written it
    await page.goto(`${api.base}/console/usage`);
    await page.getByRole('heading', { name: 'Usage', exact: true }).waitFor();
    await until('the ping on the usage page', async () => {
      await page.reload();
      return /GET \/api\/v1\/ping/.test(await page.locator('main').textContent() ?? '');
    }, { timeoutMs: 5_000, everyMs: 250 });
    await check(page, 'usage');

    // ---- an alarm by e-mail, triggered when the market moves past it
    const [bitcoin] = await db.sql<{ price: string }[]>`select price::text from market.coin_state where coin_id = (select id from market.coins where slug = 'bitcoin')`;
    const target = (Number(bitcoin!.price) * 1.05).toFixed(2);
    await page.goto(`${api.base}/console/alarms`);
    await page.getByLabel('Name', { exact: true }).fill('Bitcoin up 5%');
    await page.getByLabel(/^Coin/).fill('bitcoin');
    await page.getByLabel(/^Target/).fill(target);
    await page.getByLabel('Notify by').selectOption('email');
    await page.getByRole('button', { name: 'Create alarm' }).click();
    await page.locator('td[data-label="Name"]', { hasText: 'Bitcoin up 5%' }).waitFor();
    await check(page, 'alarm-created');
    // the tick's last step, app.evaluate_alarms, over a bitcoin that moved 10 % up
    await db.sql`update market.coin_state set price = price * 1.1 where coin_id = (select id from market.coins where slug = 'bitcoin')`;
    const [evaluated] = await db.sql<{ triggered: number }[]>`select * from app.evaluate_alarms()`;
    t.is(evaluated!.triggered, 1);
    await page.goto(`${api.base}/console/alarms`);
    await page.getByRole('button', { name: 'Re-arm Bitcoin up 5%' }).waitFor();
    t.regex(await page.locator('td[data-label="Status"]').first().textContent() ?? '', /triggered/);
    await check(page, 'alarm-triggered');
    await mailbox.waitFor(2, 10_000);
    const alarmMail = mailbox.accepted.find((m) => m.envelope.to.includes(email) && m.headers['x-service-event'] === 'alarm.triggered');
    t.truthy(alarmMail, 'the alarm.triggered e-mail arrived');
    t.regex(alarmMail!.text, /Bitcoin up 5%/);

    // ---- a webhook endpoint on a loopback receiver, its signed test event, the delivery log
    await page.goto(`${api.base}/console/webhooks`);
    await page.getByLabel(/^URL/).fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.locator('#new-secret-value').textContent())!;
    t.regex(secret, /^whsec_[0-9a-f]+$/);
    await check(page, 'webhook-created');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText('A test event is queued').waitFor();
    await until('the test event at the receiver', async () => receiver.received.length > 0, { timeoutMs: 10_000 });
    const event = receiver.received[0]!;
    t.like(event.body, { type: 'alarm.triggered', test: true });
    t.deepEqual(verifyWebhook(event.rawBody, event.headers['x-service-signature'] as string, secret), { ok: true });
    await page.getByRole('link', { name: 'Delivery log' }).first().click();
    let log = '';
    await until(() => `the attempt in the delivery log: ${page.url()} ${log.slice(0, 600)}`, async () => {
      await page.reload();
      log = await page.locator('main').textContent() ?? '';
      return /succeeded, HTTP 2\d\d/.test(log);
    }, { timeoutMs: 5_000, everyMs: 250 });
    await check(page, 'delivery-log');

    // ---- rotate (the old secret refused at once), then revoke the new one
    await page.goto(`${api.base}/console/keys`);
    const row = page.getByRole('row').filter({ hasText: 'journey key' });
    await row.getByLabel('Old key works for').selectOption('0');
    await row.getByRole('button', { name: `Rotate ${key.slice(0, 12)}` }).click();
    const rotated = (await page.locator('#new-key-value').textContent())!;
    t.not(rotated, key);
    await check(page, 'key-rotated');
    t.is(await refusedWithin(key, 2_000), 401);
    t.is((await api.get('/api/v1/ping', rotated)).status, 200);
    await page.getByRole('button', { name: `Revoke ${rotated.slice(0, 12)}` }).click();
    await page.getByText('Key revoked').waitFor();
    await check(page, 'key-revoked');
    t.is(await refusedWithin(rotated, 2_000), 401);

    await page.goto(`${api.base}/console/mcp-keys`);
    await check(page, 'mcp-keys');
    // the pages the journey does not pass through on its way
    await page.goto(`${api.base}/console/alarms`);
    await page.getByRole('link', { name: 'Edit' }).first().click();
    await check(page, 'alarm-edit');
    await page.goto(`${api.base}/console/widgets`);
    await check(page, 'widgets');
    await page.goto(`${api.base}/console/widgets/builder`);
    await check(page, 'widget-builder');
    await page.goto(`${api.base}/console/account`);
    await page.getByText(`Signed in as ${email}`).waitFor();
    await check(page, 'account');

    // ---- the operator: the first admin's printed link, the account found and disabled
    const { path } = await db.sql.begin((tx) => createAccount(tx as unknown as Sql, { email: 'operator@example.com', admin: true }));
    const operator = await newPage();
    await operator.goto(`${api.base}${path}`);
    await check(operator, 'set-password');
    await operator.getByLabel(/^New password/).fill(PASSWORD);
    await operator.getByRole('button', { name: 'Set password' }).click();
    await operator.getByRole('heading', { name: 'Data API keys' }).waitFor();
    await operator.getByRole('link', { name: 'Accounts' }).click();
    await operator.getByLabel('E-mail address contains').fill('journey');
    await operator.getByRole('button', { name: 'Search' }).click();
    await check(operator, 'admin-accounts');
    await operator.getByRole('link', { name: email }).click();
    await check(operator, 'admin-account');
    t.is((await api.get('/api/v1/ping', other)).status, 200, 'the other key works until the account is disabled');
    await operator.getByRole('button', { name: /^Disable/ }).click();
    // confirmed on a page of its own, without script
    await operator.getByRole('heading', { name: 'Disable this account?' }).waitFor();
    await check(operator, 'admin-disable-confirm');
    t.is((await api.get('/api/v1/ping', other)).status, 200, 'nothing changed before the confirmation');
    await operator.getByRole('button', { name: 'Disable account' }).click();
    await operator.getByText(/Account disabled/).waitFor();
    await check(operator, 'admin-disabled');
    t.is(await refusedWithin(other, 2_000), 401);
    await operator.goto(`${api.base}/console/admin/usage`);
    await check(operator, 'admin-usage');
    await operator.goto(`${api.base}/console/admin/status`);
    await check(operator, 'admin-status');

    // the disabled account's browser is signed out
    await page.goto(`${api.base}/console/keys`);
    t.regex(page.url(), /\/console\/sign-in/);
    await page.goto(`${api.base}/console/reset`);
    await check(page, 'reset');
    await page.goto(`${api.base}/console/invite?token=not-a-real-one`);
    await check(page, 'invite');
    t.deepEqual(blocked, [], 'no CSP violation or script error');
  } finally {
    await browser.close();
  }
});
