// The console's coin fields at 2 500+ coins, in Debian's Chromium at 375 px: a key holder creates an
// alarm by typing part of a coin's name, picking the suggestion with the keyboard and submitting, then
// builds a widget (coin card, then the ticker's list of coins) choosing its coins the same way. The
// pages stay the same size whatever the number of coins (no list of them is written into a page);
// axe-core finds no serious violation, with the suggestions open or not. Screenshots as the test log
// names them. Also the suggestions route itself: JSON, signed in only, limited per minute.
import test from 'ava';
import { chromium, type Page } from 'playwright-core';
import { startMailbox, type Mailbox } from '../../dev/mailbox.ts';
import { createWidgetKey } from '../../src/keys.ts';
import { browserTest, checkPage, CHROMIUM, screenshots } from '../helpers/browser.ts';
import { signedInAccount, ConsoleClient } from '../helpers/console.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { testApi, type TestApi } from '../helpers/http.ts';
import { manyCoins } from '../helpers/many-coins.ts';

let db: TestDatabase;
let api: TestApi;
let mailbox: Mailbox;

test.before(async () => {
  db = await testDatabase();
  mailbox = await startMailbox();
  api = await testApi(db, { env: { SMTP_URL: mailbox.url, MAIL_FROM: 'Console <console@example.com>', CONSOLE_COIN_SEARCHES_PER_MINUTE: '40' } });
  await manyCoins(db.sql, 2_500);
  // the two coins the journey picks, ranked after the 2 500 (typing part of their names must still find them)
  await db.sql`
    with made as (
      insert into market.coins (slug, symbol, name, type, source)
      values ('bitcoin', 'BTC', 'Bitcoin', 'coin', 'test-many'), ('ethereum', 'ETH', 'Ethereum', 'coin', 'test-many') returning id, slug)
    insert into market.coin_state (coin_id, price, volume_24h, marketcap, rank)
    select id, 100, 1000, 1e6, case slug when 'bitcoin' then 2501 else 2502 end from made`;
});
test.after.always(async () => {
  await api?.close();
  await mailbox?.stop();
  await db?.close();
});

const suggest = (client: ConsoleClient, q: string) => client.get(`/console/coins?q=${encodeURIComponent(q)}`);

test.serial('the suggestions route: the list\'s first 10 as JSON, signed in only, limited per minute', async (t) => {
  const { client } = await signedInAccount(db.sql, api.base, 'route@example.com');
  const found = await suggest(client, 'Bitco');
  t.is(found.status, 200);
  t.regex(found.headers.get('content-type') ?? '', /application\/json/);
  t.deepEqual(JSON.parse(found.text), { data: [{ slug: 'bitcoin', name: 'Bitcoin', symbol: 'BTC' }] });
  const many = JSON.parse((await suggest(client, 'bit')).text).data as { slug: string }[];
  t.is(many.length, 10);
  const listed = (await api.get('/api/v1/coins?search=bit&per_page=10', await api.key({ plan: 'pro' }))).body.data.map((row: { slug: string }) => row.slug);
  t.deepEqual(many.map((row) => row.slug), listed);
  t.deepEqual(JSON.parse((await suggest(client, '  ')).text), { data: [] });
  t.is((await suggest(client, 'x'.repeat(101))).status, 422);
  // signed out: to sign-in, as every console page
  t.is((await new ConsoleClient(api.base).get('/console/coins?q=bit')).status, 302);
  // 40 a minute here: the rest of this minute is refused (the minute may turn over once)
  let refused = 0;
  for (let i = 0; i < 45 && refused === 0; i++) if ((await suggest(client, 'eth')).status === 429) refused++;
  if (refused === 0) for (let i = 0; i < 45 && refused === 0; i++) if ((await suggest(client, 'eth')).status === 429) refused++;
  t.is(refused, 1);
});

test.serial('the pages do not grow with the number of coins', async (t) => {
  const { owner, client } = await signedInAccount(db.sql, api.base, 'sizes@example.com');
  const key = await createWidgetKey(db.sql, { owner, plan: 'widget-free', name: 'site', origins: ['https://site.example'] });
  const sizes = async () => [
    (await client.get('/console/alarms')).text.length,
    (await client.get(`/console/widgets/builder?key=${key.id}&coin=bitcoin`)).text.length,
    (await client.get(`/console/widgets/builder?key=${key.id}&widget=ticker&coins=bitcoin,ethereum`)).text.length,
  ];
  const before = await sizes();
  t.true(before.every((size) => size < 20_000), `sizes ${before.join(', ')}`);
  await manyCoins(db.sql, 2_500);
  t.deepEqual(await sizes(), before, '5 000 coins: the same pages, byte for byte in length');
});

browserTest('an alarm and a widget with coins chosen by typing and the keyboard, at 375 px, accessible', async (t) => {
  const shot = screenshots('console-coins', { numbered: true });
  const { owner, client } = await signedInAccount(db.sql, api.base, 'picker@example.com');
  const widgetKey = await createWidgetKey(db.sql, { owner, plan: 'widget-free', name: 'site', origins: ['https://site.example'] });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const errors: string[] = [];
  const check = async (page: Page, name: string) => {
    await checkPage(t, page, name);
    await shot(t, page, `${name}.png`);
  };
  try {
    const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
    await context.addCookies([...client.jar].map(([name, value]) => ({ name, value, url: api.base })));
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(`${message.text()} ${message.location().url}`);
    });
    /** types into a coin field, waits for `option` among the suggestions, moves to it with the arrows and picks it with Enter */
    const pick = async (fieldName: RegExp, typed: string, option: RegExp) => {
      const input = page.getByRole('combobox', { name: fieldName });
      await input.focus();
      await input.press('End');
      await input.pressSequentially(typed, { delay: 30 });
      const listbox = page.getByRole('listbox');
      await listbox.getByRole('option', { name: option }).waitFor();
      t.is(await input.getAttribute('aria-expanded'), 'true');
      const names = await listbox.getByRole('option').allTextContents();
      t.true(names.length <= 10, `${names.length} suggestions`);
      const at = names.findIndex((name) => option.test(name));
      for (let i = 0; i <= at; i++) await input.press('ArrowDown');
      t.regex((await page.locator(`#${await input.getAttribute('aria-activedescendant')}`).textContent())!, option);
      return { input, listbox };
    };

    // ---- an alarm on Bitcoin, found by part of its name
    await page.goto(`${api.base}/console/alarms`);
    await page.getByLabel('Name', { exact: true }).fill('Bitcoin doubles');
    // Escape closes the suggestions, and a second Escape clears the field
    const coinField = page.getByRole('combobox', { name: /^Coin/ });
    await coinField.pressSequentially('itco', { delay: 30 });
    await page.getByRole('listbox').getByRole('option').first().waitFor();
    await coinField.press('Escape');
    t.is(await coinField.getAttribute('aria-expanded'), 'false');
    await coinField.press('Escape');
    t.is(await coinField.inputValue(), '');
    const { input, listbox } = await pick(/^Coin/, 'Bitco', /Bitcoin \(BTC\)/);
    await check(page, 'alarm-suggestions');
    await input.press('Enter');
    t.is(await input.inputValue(), 'bitcoin');
    t.true(await listbox.isHidden());
    await page.getByLabel(/^Target/).fill('200');
    await check(page, 'alarm-form');
    await page.getByRole('button', { name: 'Create alarm' }).click();
    await page.getByText('Alarm Bitcoin doubles created and armed.').waitFor();
    await check(page, 'alarm-created');
    const [alarm] = await db.sql<{ slug: string }[]>`select c.slug from app.alarms a join market.coins c on c.id = a.coin_id where a.owner = ${owner}`;
    t.is(alarm?.slug, 'bitcoin');

    // ---- a coin card of Ethereum, then a ticker band of Bitcoin and Ethereum
    await page.goto(`${api.base}/console/widgets/builder?key=${widgetKey.id}`);
    await page.getByRole('combobox', { name: /^Coin/ }).fill('');
    const card = await pick(/^Coin/, 'Ether', /Ethereum \(ETH\)/);
    await check(page, 'builder-suggestions');
    await card.input.press('Enter');
    t.is(await card.input.inputValue(), 'ethereum');
    await page.getByRole('button', { name: 'Update preview' }).click();
    await page.waitForURL(/coin=ethereum/);
    t.regex((await page.locator('#preview').getAttribute('src'))!, /\/widgets\/coin-card\?.*coin=ethereum/);
    await check(page, 'builder-coin-card');

    await page.goto(`${api.base}/console/widgets/builder?key=${widgetKey.id}&widget=ticker&coins=bitcoin`);
    const ticker = await pick(/^Coins/, ',ethe', /Ethereum \(ETH\)/);
    await ticker.input.press('Enter');
    t.is(await ticker.input.inputValue(), 'bitcoin,ethereum');
    await page.getByRole('button', { name: 'Update preview' }).click();
    await page.waitForURL(/coins=bitcoin%2Cethereum/);
    await check(page, 'builder-ticker');
    t.deepEqual(errors, [], 'no script error, nothing the CSP blocked');
  } finally {
    await browser.close();
  }
});
