// The operators' per-venue candle figures (issue 46): markets streamed and on REST fallback as the
// holder recorded them, candles per minute by path over the last 5 closed minutes, and the delay
// from a minute's close to its index bar (market.index_bar_delays), read the same in
// market.venue_health, /status.json, /metrics and the /status page (Chromium at 375 px, axe).
import test from 'ava';
import { chromium } from 'playwright-core';
import { browserTest, checkPage, CHROMIUM, screenshot } from '../helpers/browser.ts';
import { useApi } from '../helpers/http.ts';
import { loadIndexMarket } from '../helpers/index-market.ts';

const handles = useApi(test, {
  setup: async ({ db }) => {
    await loadIndexMarket(db.sql, [['binance', 'BTC/USDT', 'btc', 'USDT'], ['binance', 'ETH/USDT', 'eth', 'USDT'], ['kraken', 'BTC/USD', 'btc', 'USD']]);
    await db.sql`insert into app.worker_heartbeats (worker_id, process) values ('venue-operators', 'test:1')`;
  },
});

/**
 * The last 5 closed minutes: binance's BTC and ETH candles from its stream, kraken's BTC from REST;
 * binance's minutes built into the index 2, 2, 5, 8 and 8 s after their close, kraken's 2 s after.
 */
async function candles() {
  const { sql } = handles.db;
  await sql`delete from market.venue_bars_1m`;
  await sql`delete from market.index_bar_delays`;
  await sql`
    insert into market.venue_bars_1m (time, coin_id, exchange_id, quote, open, high, low, close, volume, path)
    select m.time, c.id, e.id, v.quote, 100, 100, 100, 100, 1, v.path
    from (values ('binance', 'btc', 'USDT', 'stream'), ('binance', 'eth', 'USDT', 'stream'), ('kraken', 'btc', 'USD', 'rest')) v (venue, coin, quote, path)
    join market.exchanges e on e.slug = v.venue
    join market.coins c on c.slug = v.coin
    cross join generate_series(date_trunc('minute', now()) - interval '5 minutes', date_trunc('minute', now()) - interval '1 minute', interval '1 minute') m (time)`;
  await sql`
    insert into market.index_bar_delays (exchange_id, minute, bar_at, delay_seconds, stream_candles, rest_candles)
    select e.id, date_trunc('minute', now()) - make_interval(mins => v.ago), date_trunc('minute', now()) - make_interval(mins => v.ago - 1) + make_interval(secs => v.delay),
      v.delay, v.stream, v.rest
    from (values ('binance', 5, 2, 2, 0), ('binance', 4, 2, 2, 0), ('binance', 3, 5, 2, 0), ('binance', 2, 8, 2, 0), ('binance', 1, 8, 2, 0),
                 ('kraken', 5, 2, 0, 1), ('kraken', 4, 2, 0, 1), ('kraken', 3, 2, 0, 1), ('kraken', 2, 2, 0, 1), ('kraken', 1, 2, 0, 1)) v (venue, ago, delay, stream, rest)
    join market.exchanges e on e.slug = v.venue`;
  await sql`select market.record_venue_candle_markets('{"binance": {"streamed": 2, "fallback": 1}, "kraken": {"streamed": 0, "fallback": 1}}')`;
}

test.serial('market.venue_health: markets streamed and on REST fallback, candles per minute by path, index bar delay p50/p99', async (t) => {
  const { sql } = handles.db;
  await candles();
  const rows = await sql`
    select exchange, markets_streamed, markets_rest_fallback, candles_per_minute_stream::text as stream, candles_per_minute_rest::text as rest,
      index_delay_p50_seconds::text as p50, index_delay_p99_seconds::text as p99
    from market.venue_health where exchange in ('binance', 'kraken', 'okx') order by exchange`;
  t.deepEqual(rows.map((row) => ({ ...row })), [
    // 2, 2, 5, 8, 8 s: the median 5, the 99th percentile 8
    { exchange: 'binance', markets_streamed: 2, markets_rest_fallback: 1, stream: '2.0', rest: '0.0', p50: '5.0', p99: '8.0' },
    { exchange: 'kraken', markets_streamed: 0, markets_rest_fallback: 1, stream: '0.0', rest: '1.0', p50: '2.0', p99: '2.0' },
    // no holder counted it, no candles: nothing to say
    { exchange: 'okx', markets_streamed: null, markets_rest_fallback: null, stream: '0.0', rest: '0.0', p50: null, p99: null },
  ]);
  // a count older than 2 minutes: no holder streams the venue now
  await sql`update market.venue_status set candle_markets_at = now() - interval '3 minutes'`;
  const [stale] = await sql`select markets_streamed, markets_rest_fallback from market.venue_health where exchange = 'binance'`;
  t.deepEqual({ ...stale }, { markets_streamed: null, markets_rest_fallback: null });
});

test.serial('/status.json and /metrics show each venue\'s figures', async (t) => {
  await candles();
  const status = await handles.api.get('/status.json', null);
  t.is(status.status, 200);
  const venue = (status.body.data.components as { id: string; state: string; figures: Record<string, unknown> }[]).find((c) => c.id === 'venue:binance');
  t.like(venue, {
    state: 'operational',
    figures: { markets_streamed: 2, markets_on_rest_fallback: 1, stream_candles_per_minute: 2, rest_candles_per_minute: 0, index_bar_delay_p50_seconds: 5, index_bar_delay_p99_seconds: 8 },
  });
  const metrics = (await handles.api.get('/metrics')).body as string;
  for (const line of [
    'mdapi_venue_candle_markets{path="stream",venue="binance"} 2',
    'mdapi_venue_candle_markets{path="rest_fallback",venue="binance"} 1',
    'mdapi_venue_candles_per_minute{path="stream",venue="binance"} 2',
    'mdapi_venue_candles_per_minute{path="rest",venue="kraken"} 1',
    'mdapi_venue_index_delay_seconds{venue="binance",quantile="0.5"} 5',
    'mdapi_venue_index_delay_seconds{venue="binance",quantile="0.99"} 8',
  ]) t.true(metrics.split('\n').includes(line), `${line} in ${metrics.split('\n').filter((l) => l.startsWith('mdapi_venue_')).join('; ')}`);
  t.false(metrics.includes('mdapi_venue_candle_markets{venue="okx"'), 'no sample while nobody counted');
});

browserTest('the /status page at 375 px: each venue\'s figures readable, no serious axe violation, nothing scrolls sideways', async (t) => {
  await candles();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 375, height: 740 } })).newPage();
    const response = await page.goto(`${handles.api.base}/status`);
    t.is(response?.status(), 200);
    const binance = await page.locator('tr[data-component="venue:binance"]').innerText();
    for (const figure of ['markets streamed: 2', 'markets on rest fallback: 1', 'stream candles per minute: 2', 'rest candles per minute: 0',
      'index bar delay p50 seconds: 5', 'index bar delay p99 seconds: 8']) t.true(binance.includes(figure), `${figure} in ${binance}`);
    await checkPage(t, page, 'status at 375 px');
    await screenshot(t, page, 'venue-status', 'status-375.png');
  } finally {
    await browser.close();
  }
});
