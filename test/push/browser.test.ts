// The account page's push section in Debian's Chromium: the console's service worker registers
// (scope /console/) under the console's CSP, "Notify this browser" is offered, a push handed to the
// worker (DevTools' deliverPushMessage: no real push service is reachable offline) shows its
// notification, and axe-core finds no serious or critical violation at 375 px; a screenshot is written.
import test from 'ava';
import { chromium } from 'playwright-core';
import { browserTest, checkPage, CHROMIUM, screenshot } from '../helpers/browser.ts';
import { signedInAccount } from '../helpers/console.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { subscriber } from '../helpers/push.ts';

let db: TestDatabase;
let api: TestApi;

test.before(async () => {
  db = await testDatabase();
  api = await testApi(db, { env: { PUSH_ALLOW_LOOPBACK: 'true' } });
});
test.after.always(async () => {
  await api?.close();
  await db?.close();
});

browserTest('the service worker registers from the account page, offers "Notify this browser" and shows a pushed notification', async (t) => {
  const { client } = await signedInAccount(db.sql, api.base, 'browser@example.com', 'Chromium (test)');
  // one browser already listed, so that the table is checked too
  await client.get('/console/account');
  await client.post('/console/push/subscribe', { endpoint: 'http://127.0.0.1:9/push/listed', ...subscriber().keys });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const errors: string[] = [];
  try {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
    await context.grantPermissions(['notifications'], { origin: api.base });
    await context.addCookies([...client.jar].map(([name, value]) => ({ name, value, url: api.base })));
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`${message.text()} ${message.location().url}`);
    });
    await page.goto(`${api.base}/console/account`);
    await page.getByRole('heading', { name: 'Browsers notified of alarms' }).waitFor();
    const button = page.getByRole('button', { name: 'Notify this browser' });
    await button.waitFor({ state: 'visible' });
    t.true(await button.isEnabled(), 'offered: the page\'s module ran under the CSP');

    const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
    t.is(scope, `${api.base}/console/`);
    const script = await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL);
    t.is(script, `${api.base}/console/sw.js`);

    // a push as the push service would hand it over, decrypted: the worker shows it
    const cdp = await context.newCDPSession(page);
    const registrationId = await new Promise<string>((resolve) => {
      cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
        const found = registrations.find((r) => r.scopeURL === `${api.base}/console/` && !r.isDeleted);
        if (found) resolve(found.registrationId);
      });
      void cdp.send('ServiceWorker.enable');
    });
    const message = { type: 'alarm.triggered', title: 'Alpha up triggered', body: 'Alpha (ALP) price (USD) at or above 150: now 151', url: '/console/alarms#alarm-7', tag: 'alarm-7' };
    await cdp.send('ServiceWorker.deliverPushMessage', { origin: api.base, registrationId, data: JSON.stringify(message) });
    const shown = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.ready;
      // up to 20 s: a worker woken for a push on a machine busy with the rest of the suite can take seconds
      for (let i = 0; i < 400; i++) {
        const notifications = await registration.getNotifications();
        if (notifications.length) return notifications.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return [];
    });
    t.deepEqual(shown, [{ title: message.title, body: message.body, tag: 'alarm-7', data: { url: '/console/alarms#alarm-7' } }]);

    await checkPage(t, page, 'account');
    await screenshot(t, page, 'push', 'account-push.png');
    t.deepEqual(errors, [], 'no CSP violation or script error');
  } finally {
    await browser.close();
  }
});
