// EXCHANGES beyond the ten supported venues: any other ccxt id with public tickers and one-minute
// candles is accepted and labelled unverified (market.exchanges.verified, set by
// market.load_exchange_venues through the venue catalogue), shown in the venue's detail and on
// /status; one lacking tickers or one-minute candles is refused with what it lacks.
import test from 'ava';
import { useApi } from '../helpers/http.ts';
import { createVenue, parseExchangeUrls, parseExchanges, streamsTickers } from '../../src/sources/exchanges/venues.ts';
import { ensureVenueCatalogue } from '../../src/sources/exchanges/catalogue.ts';
import { startWorker } from '../../src/worker.ts';

const handles = useApi(test);

test('EXCHANGES takes a ccxt id with public tickers and 1m candles beyond the ten, and refuses one lacking them, saying what it lacks', (t) => {
  t.deepEqual(parseExchanges('binance,bitstamp'), ['binance', 'bitstamp']);
  t.deepEqual(parseExchangeUrls('bitstamp=http://127.0.0.1:9/bitstamp'), { bitstamp: 'http://127.0.0.1:9/bitstamp' });
  t.throws(() => parseExchanges('binance,coinmate'), { message: 'EXCHANGES: the ccxt exchange "coinmate" cannot be read: it lacks candles (fetchOHLCV)' });
  t.throws(() => parseExchanges('bitbank'), { message: 'EXCHANGES: the ccxt exchange "bitbank" cannot be read: it lacks public tickers (fetchTickers)' });
  t.throws(() => parseExchanges('mercado'), { message: /lacks public tickers \(fetchTickers\) and one-minute candles \(the 1m timeframe\)/ });
  t.throws(() => parseExchanges('binance,mtgox'), { message: /unknown exchange venue "mtgox" \(verified: binance, .*; or any other ccxt id/ });
  t.throws(() => parseExchangeUrls('coinmate=http://x'), { message: /^EXCHANGE_URLS: the ccxt exchange "coinmate" cannot be read/ });
  // read as ccxt reads it, through REST alone
  const bitstamp = createVenue('bitstamp', { baseUrl: 'http://127.0.0.1:9/bitstamp' });
  t.is(bitstamp.id, 'bitstamp');
  t.true(String((bitstamp.urls['api'] as Record<string, string>)['public']).startsWith('http://127.0.0.1:9/bitstamp/'));
  t.false(streamsTickers('bitstamp'));
  t.true(streamsTickers('htx'));
  t.false(streamsTickers('mexc'), 'ccxt pro streams no spot last price of MEXC');
});

test('a worker with a venue it cannot read refuses to start, saying what the venue lacks', async (t) => {
  const config = handles.db.config({ MARKET_SOURCE: 'exchanges', EXCHANGES: 'binance,coinmate' });
  await t.throwsAsync(startWorker(config, { taskList: () => ({}), crontab: '', onWorkerStart: async () => {} }), {
    message: 'EXCHANGES: the ccxt exchange "coinmate" cannot be read: it lacks candles (fetchOHLCV)',
  });
});

test('an unverified venue is labelled so in market.exchanges, its /exchanges/{slug} detail and on /status', async (t) => {
  const { db, api } = handles;
  // bitstamp has curated metadata (venues.json), bitvavo only what ccxt knows: both unverified
  await ensureVenueCatalogue(db.query, ['binance', 'bitstamp', 'bitvavo'], (id) => createVenue(id));
  const rows = await db.sql<{ slug: string; name: string; verified: boolean }[]>`
    select slug, name, verified from market.exchanges where slug in ('binance', 'bitstamp', 'bitvavo') order by slug`;
  t.deepEqual(rows.map((row) => ({ ...row })), [
    { slug: 'binance', name: 'Binance', verified: true },
    { slug: 'bitstamp', name: 'Bitstamp', verified: false },
    { slug: 'bitvavo', name: 'Bitvavo', verified: false },
  ]);

  const key = await api.key({ plan: 'pro' });
  t.like((await api.get('/api/v1/exchanges/bitstamp', key)).body.data, { slug: 'bitstamp', verified: false });
  t.like((await api.get('/api/v1/exchanges/binance', key)).body.data, { slug: 'binance', verified: true });

  // the exchanges source serving, as after its first run
  await db.sql`update market.data_sources set last_run_at = now(), last_success_at = now(), covered_until = date_trunc('minute', now()),
    venues = '{"binance": "up", "bitstamp": "up", "bitvavo": "up"}' where name = 'exchanges'`;
  const report = (await api.get('/status.json', null)).body.data as { components: { id: string; figures: Record<string, unknown> }[] };
  t.deepEqual(report.components.find((component) => component.id === 'source:exchanges')?.figures['unverified_venues'], ['bitstamp', 'bitvavo']);
  const page = await api.get('/status', null);
  t.regex(String(page.body), /unverified venues: bitstamp, bitvavo/);

  // named among the supported venues again (a later load): verified
  await db.sql`select market.load_exchange_venues('[{"slug": "bitvavo", "name": "Bitvavo", "verified": true}]'::jsonb)`;
  t.is((await api.get('/api/v1/exchanges/bitvavo', key)).body.data.verified, true);
});
