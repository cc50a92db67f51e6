// The ECB source on recorded eurofxref-daily.xml responses (dev/venues/recorded/ecb, which the venue replay serves): the parser, storing
// a day as units per USD, and malformed or failed downloads, which must leave the previous rates.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { readFileSync } from 'node:fs';
import { EcbFormatError, parseEcbDaily, refreshEcbRates, type Fetch } from '../../src/sources/ecb.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

const recorded = (name: string) => readFileSync(new URL(`../../dev/venues/recorded/ecb/${name}`, import.meta.url), 'utf8');
const replay = (body: string, status = 200): Fetch => async () => ({ ok: status >= 200 && status < 300, status, text: async () => body });

/** The rates of a recorded day, read off the XML independently of the parser. */
const recordedRates = (name: string) =>
  Object.fromEntries([...recorded(name).matchAll(/currency='([A-Z]{3})' rate='([\d.]+)'/g)].map((m) => [m[1]!, m[2]!]));
const perUsd = (perEur: string, usdPerEur: string) => new Decimal(perEur).div(usdPerEur).toSignificantDigits(10).toFixed();

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const latest = async () =>
  Object.fromEntries((await db.sql`select currency, rate::text, source, time from market.fx_latest`).map((r) => [r.currency, { ...r }]));

test('parser: the date and every rate of a recorded day, as published (decimal strings)', (t) => {
  const day = parseEcbDaily(recorded('eurofxref-daily-2025-07-01.xml'));
  t.is(day.date, '2025-07-01');
  t.deepEqual(day.ratesPerEur, recordedRates('eurofxref-daily-2025-07-01.xml'));
  t.is(Object.keys(day.ratesPerEur).length, 30);
  t.is(day.ratesPerEur.GBP, '0.85960', 'trailing zeros kept: no float on the way');
});

test('parser: malformed responses fail with a clear EcbFormatError', (t) => {
  const cases: [string, RegExp][] = [
    ['eurofxref-daily-truncated.xml', /not a complete eurofxref document/],
    ['eurofxref-daily-bad-rate.xml', /invalid rate "N\/A" for JPY on 2025-07-03/],
    ['eurofxref-daily-html-error.xml', /not a complete eurofxref document/],
  ];
  for (const [name, message] of cases) {
    const error = t.throws(() => parseEcbDaily(recorded(name)), { instanceOf: EcbFormatError }, name);
    t.regex(error!.message, message, name);
    t.regex(error!.message, /^ECB reference rates: /);
  }
  const noUsd = recorded('eurofxref-daily-2025-07-01.xml').replace(/\s*<Cube currency='USD' rate='[\d.]+'\/>/, '');
  t.throws(() => parseEcbDaily(noUsd), { instanceOf: EcbFormatError, message: /no USD rate on 2025-07-01/ });
  const twoDays = recorded('eurofxref-daily-2025-07-01.xml').replace("<Cube time='2025-07-01'>", "<Cube time='2025-06-30'></Cube><Cube time='2025-07-01'>");
  t.throws(() => parseEcbDaily(twoDays), { instanceOf: EcbFormatError, message: /expected one dated/ });
  // a real XML parser: attribute order, quotes and spacing do not matter
  const reordered = recorded('eurofxref-daily-2025-07-01.xml').replace(/<Cube currency='(\w+)' rate='([\d.]+)'\/>/g, '<Cube  rate="$2"\n currency="$1" />');
  t.deepEqual(parseEcbDaily(reordered), parseEcbDaily(recorded('eurofxref-daily-2025-07-01.xml')));
});

test.serial('a stored day: units per USD through the EUR/USD rate, EUR its inverse, at 16:00 Frankfurt time; seed-only currencies stay', async (t) => {
  const result = await refreshEcbRates(db.query, replay(recorded('eurofxref-daily-2025-07-01.xml')));
  t.deepEqual(result, { date: '2025-07-01', rows: 31 }, '29 currencies besides USD, plus EUR and USD');
  const rates = recordedRates('eurofxref-daily-2025-07-01.xml');
  const now = await latest();
  for (const [currency, perEur] of Object.entries(rates)) {
    if (currency === 'USD') continue;
    t.is(now[currency]!.rate, perUsd(perEur, rates.USD!), currency);
    t.is(now[currency]!.source, 'ecb');
  }
  t.is(now.EUR!.rate, new Decimal(1).div(rates.USD!).toSignificantDigits(10).toFixed());
  t.is(now.USD!.rate, '1');
  t.is((now.EUR!.time as Date).toISOString(), '2025-07-01T14:00:00.000Z', '16:00 CEST');
  t.is(now.ARS!.source, 'fx-seed', 'a currency the ECB does not publish keeps its seeded rate');
  const [source] = await db.sql`select demo, covered_until from market.data_sources where name = 'ecb'`;
  t.false(source!.demo);
  // the same day again changes nothing
  await refreshEcbRates(db.query, replay(recorded('eurofxref-daily-2025-07-01.xml')));
  t.deepEqual(await latest(), now);
});

test.serial('malformed or failed downloads: a clear error, and the previous rates stay current', async (t) => {
  await refreshEcbRates(db.query, replay(recorded('eurofxref-daily-2025-07-01.xml')));
  const before = await latest();
  for (const name of ['eurofxref-daily-truncated.xml', 'eurofxref-daily-bad-rate.xml', 'eurofxref-daily-html-error.xml']) {
    await t.throwsAsync(refreshEcbRates(db.query, replay(recorded(name))), { instanceOf: EcbFormatError }, name);
  }
  await t.throwsAsync(refreshEcbRates(db.query, replay('Service Unavailable', 503)), { instanceOf: EcbFormatError, message: /HTTP 503/ });
  t.deepEqual(await latest(), before);
  // the database refuses a day without USD too (analysts calling it directly)
  await t.throwsAsync(db.sql`select market.store_ecb_rates('2025-07-04', '{"JPY": "170"}')`, { message: /no USD rate/ });
  t.deepEqual(await latest(), before);
  // and a good next day replaces them
  await refreshEcbRates(db.query, replay(recorded('eurofxref-daily-2025-07-02.xml')));
  const after = await latest();
  const rates = recordedRates('eurofxref-daily-2025-07-02.xml');
  t.is(after.JPY!.rate, perUsd(rates.JPY!, rates.USD!));
  t.is((after.JPY!.time as Date).toISOString(), '2025-07-02T14:00:00.000Z');
});
