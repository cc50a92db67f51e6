// Calculators group over HTTP: DCA, profit/loss and loan over a coin with a fixed daily history
// (with a gap on 2024-02-29), compound interest and staking, and the 422s that name the field.
import test from 'ava';
import { Decimal } from 'decimal.js';
import { useApi } from '../helpers/http.ts';
import { insertCoin, refreshAggregates, type DailyBar } from '../../dev/indicators.ts';

const COIN = { id: 7001, slug: 'calc-coin' };
// 2024-01-28 .. 2024-04-02 closing at 50, except the days the tests buy or sell on; no bar on 2024-02-29
const SPECIAL: Record<string, string> = { '2024-01-31': '10', '2024-02-28': '20', '2024-03-31': '25', '2024-04-02': '30' };
const bars: DailyBar[] = [];
for (let day = Date.parse('2024-01-28T00:00:00Z'); day <= Date.parse('2024-04-02T00:00:00Z'); day += 86_400_000) {
  const date = new Date(day).toISOString().slice(0, 10);
  if (date === '2024-02-29') continue;
  const close = SPECIAL[date] ?? '50';
  bars.push({ date, open: close, high: close, low: close, close, volume: '1000' });
}

const handles = useApi(test, {
  setup: async ({ db }) => {
    await insertCoin(db.sql, COIN, bars);
    await refreshAggregates(db.sql);
    await db.sql`select market.refresh_coin_state()`;
  },
});
let key: Promise<string> | undefined;
const get = async (path: string) => handles.api.get(`/api/v1/calculators/${path}`, await (key ??= handles.api.key({ plan: 'free' })));

test('dca: monthly buys on Jan 31, Feb 29 (the gap: Feb 28 close) and Mar 31, hand-computed', async (t) => {
  const response = await get(`dca?slug=${COIN.slug}&amount=100&interval=monthly&start=2024-01-31&end=2024-04-01&series=true`);
  t.is(response.status, 200, JSON.stringify(response.body));
  // 100/10 + 100/20 + 100/25 = 19 coins for 300, worth 19 x 30 (the current price) = 570
  // the reference's fields as JSON numbers, today's exact decimal strings beside them
  t.deepEqual(response.body.data.summary, {
    invested: 300, accumulated: 19, final_value: 570, profit: 270, roi: 90,
    total_invested: '300', total_quantity: '19', average_price: '15.7894736842105', current_price: '30', current_value: '570', purchases: 3,
  });
  t.deepEqual(response.body.data.series.map((row: { date: string; price: string; price_date: string }) => [row.date, row.price, row.price_date]), [
    ['2024-01-31', '10', '2024-01-31'], ['2024-02-29', '20', '2024-02-28'], ['2024-03-31', '25', '2024-03-31'],
  ]);
  t.deepEqual(response.body.meta, { coin: COIN.slug, interval: 'monthly', start: '2024-01-31', end: '2024-04-01', amount_per_buy: 100, currency: 'USD' });
  const weekly = await get(`dca?slug=${COIN.slug}&amount=10&interval=weekly&start=2024-03-17&end=2024-03-31`);
  t.like(weekly.body.data, { summary: { purchases: 3, invested: 30, total_invested: '30' }, series: null });
});

test('dca: a start before the coin\'s history is a 422 naming start and the first day; an unknown coin a 404', async (t) => {
  const early = await get(`dca?slug=${COIN.slug}&amount=100&interval=monthly&start=2023-12-31&end=2024-03-01`);
  t.is(early.status, 422);
  t.regex(early.body.error.message, /^start: 2023-12-31 is before the daily price history of calc-coin, which starts on 2024-01-28\./);
  const unknown = await get('dca?slug=no-such-coin&amount=100&interval=monthly&start=2024-01-31');
  t.is(unknown.status, 404);
  const future = await get(`dca?slug=${COIN.slug}&amount=100&interval=monthly&start=2024-01-31&end=2999-01-01`);
  t.deepEqual(Object.keys(future.body.error.details.errors), ['end']);
});

test('profit-loss: buy at the Jan 31 close, sell at the Mar 31 close, percent fees (hand-computed)', async (t) => {
  const response = await get(`profit-loss?slug=${COIN.slug}&amount=1000&buy_date=2024-01-31&sell_date=2024-03-31&buy_fee=1&sell_fee=0.5`);
  t.is(response.status, 200, JSON.stringify(response.body));
  // 990 / 10 = 99 coins; 99 x 25 = 2475, less 0.5 % = 12.375: 2462.625; profit 1462.625
  t.deepEqual(response.body.data, {
    // the reference's fields JSON numbers rounded once, half away from zero: 2462.625 -> 2462.63
    buy_price: '10', sell_price: '25', quantity: 99, investment_worth: 2462.63, total_fees: 22.38, buy_fee_amount: '10', sell_fee_amount: '12.375',
    profit: 1462.63, roi: 146.26, buy_price_date: '2024-01-31', sell_price_date: '2024-03-31',
  });
  t.like(response.body.meta, { coin: COIN.slug, amount: 1000, buy_fee: 1, sell_fee: 0.5, currency: 'USD' });
  const reversed = await get(`profit-loss?slug=${COIN.slug}&amount=1000&buy_date=2024-03-31&sell_date=2024-01-31`);
  t.deepEqual(Object.keys(reversed.body.error.details.errors), ['sell_date']);
  const early = await get(`profit-loss?slug=${COIN.slug}&amount=1000&buy_date=2020-01-01&sell_date=2024-01-31`);
  t.is(early.status, 422);
  t.regex(early.body.error.message, /^buy_date: 2020-01-01 is before/);
});

test('loan: the collateral is valued at the current price', async (t) => {
  const response = await get(`loan?slug=${COIN.slug}&crypto_amount=10&needed_cash=100`);
  t.is(response.status, 200, JSON.stringify(response.body));
  t.like(response.body.data, { current_price: '30', collateral_value: 300, max_loan: 150, loan_possible: true, loan_scenario: { ltv: '33.3333', term_months: 36 } });
  // the reference's names and JSON number types: the annuity 100 r / (1 - (1 + r)^-36), r = 10/1200, is 3.2267...,
  // charged 3.3 (up to 0.1, as the reference), 36 x 3.3 = 118.8 paid; 100 / 0.75 gross, 33.33 tax
  const { loan_scenario: loan, sell_scenario: sell } = response.body.data;
  t.like(loan, { total_payback: 118.8, monthly_payment: 3.3, total_interest: 18.8 });
  t.regex(loan.monthly_payment_exact, /^3\.2267/);
  t.is(loan.net_value, Number(new Decimal(loan.end_value).toDecimalPlaces(2).toFixed()));
  t.like(sell, { crypto_sold: 4.4444444444, capital_gains_tax: 33.33 });
  t.is(sell.net_value, Number(new Decimal(sell.end_value).toDecimalPlaces(2).toFixed()));
  for (const value of [response.body.data.opportunity_cost, response.body.data.break_even_growth]) t.is(typeof value, 'number');
  t.like(response.body.meta, { coin: COIN.slug, currency: 'USD' });
  t.is((await get('loan?slug=no-such-coin&crypto_amount=10&needed_cash=100')).status, 404);
});

test('compound-interest: the partial-period case over HTTP, with the rate convention in meta.note', async (t) => {
  const response = await get('compound-interest?principal=1000&rate=12&duration=7&duration_unit=months&compound_frequency=quarterly');
  t.is(response.status, 200, JSON.stringify(response.body));
  t.like(response.body.data, { final_balance: 1071.51, total_contributions: 1000, total_interest: 71.51, roi: 7.15 });
  t.regex(response.body.meta.note, /nominal annual rate/);
  const weekly = await get('compound-interest?principal=0&rate=5&duration=2&duration_unit=weeks&compound_frequency=weekly&contribution=10&contribution_frequency=weekly');
  t.like(weekly.body.data, { total_contributions: 20, contributions: 2 });
  const yearly = await get('compound-interest?principal=100&rate=10&duration=2&compound_frequency=yearly');
  t.is(yearly.body.data.final_balance, 121);
});

test('staking over HTTP', async (t) => {
  const response = await get('staking?amount=1000&period=2&apy=10&commission=10&compound_frequency=yearly&price_change=-50');
  t.is(response.status, 200, JSON.stringify(response.body));
  t.like(response.body.data, { final_balance: 1188.1, total_rewards: 188.1, yearly_reward: 94.05, monthly_reward: 7.84, roi: 18.81, with_price_change: { final_value: '594.05' } });
});

test('422s name the field: negative amounts, zero periods, durations beyond 50 years', async (t) => {
  const cases: [string, string][] = [
    ['compound-interest?principal=-1&rate=5&duration=1', 'principal'],
    ['compound-interest?principal=0&rate=5&duration=1', 'principal'],
    ['compound-interest?principal=100&rate=-5&duration=1', 'rate'],
    ['compound-interest?principal=100&rate=5&duration=0', 'duration'],
    ['compound-interest?principal=100&rate=5&duration=51', 'duration'],
    ['compound-interest?principal=100&rate=5&duration=601&duration_unit=months', 'duration'],
    ['compound-interest?principal=100&rate=5&duration=18251&duration_unit=days', 'duration'],
    ['compound-interest?principal=100&rate=5&duration=2608&duration_unit=weeks', 'duration'],
    ['compound-interest?principal=100&rate=5&duration=1&contribution=-10', 'contribution'],
    ['compound-interest?principal=100&rate=5&duration=1&compound_frequency=hourly', 'compound_frequency'],
    ['staking?amount=100&period=0&apy=5', 'period'],
    ['staking?amount=100&period=50.01&apy=5', 'period'],
    ['staking?amount=-100&period=1&apy=5', 'amount'],
    ['staking?amount=100&period=1&apy=5&commission=101', 'commission'],
    [`dca?slug=${COIN.slug}&amount=0&interval=monthly&start=2024-01-31`, 'amount'],
    [`dca?slug=${COIN.slug}&amount=10&interval=monthly&start=2008-12-31`, 'start'],
    [`profit-loss?slug=${COIN.slug}&amount=10&buy_date=2024-01-31&sell_date=2024-02-01&buy_fee=-1`, 'buy_fee'],
    [`loan?slug=${COIN.slug}&crypto_amount=0&needed_cash=100`, 'crypto_amount'],
    [`loan?slug=${COIN.slug}&crypto_amount=1&needed_cash=100&ltv=90`, 'liquidation_ltv'],
    [`loan?slug=${COIN.slug}&crypto_amount=1&needed_cash=100&term_months=0`, 'term_months'],
    // not numbers at all: the format error, never a 500 from a range check that parses the value
    [`loan?slug=${COIN.slug}&crypto_amount=1&needed_cash=100&ltv=abc`, 'ltv'],
    [`loan?slug=${COIN.slug}&crypto_amount=1&needed_cash=100&tax_rate=1e5`, 'tax_rate'],
    ['staking?amount=%00&period=1&apy=5', 'amount'],
    ['compound-interest?principal=NaN&rate=5&duration=1', 'principal'],
    [`profit-loss?slug=${COIN.slug}&amount=10&buy_date=2024-01-31&sell_date=2024-02-01&buy_fee=x`, 'buy_fee'],
  ];
  for (const [path, field] of cases) {
    const response = await get(path);
    t.is(response.status, 422, path);
    t.deepEqual(Object.keys(response.body.error?.details?.errors ?? {}), [field], path);
  }
});
