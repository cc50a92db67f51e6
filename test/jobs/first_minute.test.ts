// The demo's venues answer from the first minute after `make start`: the worker's first job loads
// them (loadDemoVenues), ahead of the demo market's history (the order: test/jobs/simulated_market.test.ts),
// and they answer before any coin has a price.
import test from 'ava';
import { loadDemoVenues } from '../../src/sources/simulated/exchanges.ts';
import { useApi } from '../helpers/http.ts';
import { withQuery } from '../helpers/query.ts';

const handles = useApi(test);

test.serial('before any coin has a price, the demo venues\' first run makes them answer: detail, list and tickers', async (t) => {
  const key = await handles.api.key();
  t.is((await handles.api.get('/api/v1/exchanges/binance', key)).status, 404, 'not there before the run');
  const [priced] = await handles.db.sql<{ n: number }[]>`select count(*)::int as n from market.coin_state where price is not null`;
  t.is(priced!.n, 0, 'no coin has a price yet');
  const started = Date.now();
  await withQuery(handles.db, loadDemoVenues);
  t.log(`first run: ${Date.now() - started} ms`);
  const detail = await handles.api.get('/api/v1/exchanges/binance', key);
  t.is(detail.status, 200, JSON.stringify(detail.body));
  t.like(detail.body.data, { name: 'Binance' });
  const list = await handles.api.get('/api/v1/exchanges', key);
  t.is(list.status, 200);
  t.true(list.body.data.some((exchange: { name: string }) => exchange.name === 'Binance'));
  t.is((await handles.api.get('/api/v1/exchanges/binance/tickers', key)).status, 200);
  // not a run of the source: its health waits for the run that writes the venues' history
  t.like((await handles.db.sql`select status from market.source_health where name = 'simulated-exchanges'`)[0], { status: 'idle' });
});
