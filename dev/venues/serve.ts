// `make venues-replay`: the loopback replay of all its venues on a fixed port, with their ticker and candle
// streams (streams.ts, at the replay's prices), the ECB's daily rates (recorded) and CoinPaprika's
// coin list and tickers, for fully offline manual runs: it prints what it serves and the environment
// to give `make start`. Options: --port N (default 8780), --coins N (default 300: the catalogue's coins
// by rank, every venue listing a large share of them; beyond 300 the venues' lists take their real
// sizes, e.g. --coins 2500: about 11 000 spot markets). --requests-every MS: a line
// `requests <ms since epoch> <JSON: venue → REST requests so far>` every MS (bench/scale.ts reads them).
import { parseArgs } from 'node:util';
import { COMPACT_COINS, REPLAY_VENUES } from './replay.ts';
import { replayEnvironment, startOfflineReplay } from './offline.ts';
import { serveVenueStreams } from './streams.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8780' }, coins: { type: 'string', default: '300' }, 'requests-every': { type: 'string', default: '0' } } });
const port = Number(values.port);
const coins = Number(values.coins);
if (!Number.isInteger(port) || port < 0 || !Number.isInteger(coins) || coins < 1) {
  console.error('usage: node dev/venues/serve.ts [--port N] [--coins N]');
  process.exit(2);
}
const { replay, scenario, metadata } = await startOfflineReplay({ coins, port });
// the ticker and one-minute candle streams of the venues that have them, at the replay's prices, once a second as the venues send them
const streams = serveVenueStreams(replay, { intervalMs: 1000, modelPrices: true });
const counts = REPLAY_VENUES.map((venue) => [venue, scenario.venues[venue]?.markets.length ?? 0] as const);
const total = counts.reduce((sum, [, n]) => sum + n, 0);
const bases = new Set(Object.values(scenario.venues).flatMap((spec) => spec.markets.map((market) => (typeof market === 'string' ? market : market.symbol).split('/')[0])));
console.log(`venue replay on ${replay.url}: ${scenario.coins.length} coins, ${bases.size} traded; ${total} spot markets (${counts.map(([venue, n]) => `${venue} ${n}`).join(', ')})`);
console.log(
  `ECB rates recorded; CoinPaprika /v1/coins ${metadata.coins} entries, /v1/tickers ${coins > COMPACT_COINS ? 'of the scenario' : 'recorded'}` +
    (metadata.cases.unnamed.length ? `; ${metadata.cases.unnamed.length} traded symbols it does not list, shared ticker ${metadata.cases.sharedTicker.map((c) => c.symbol).join(', ')}` : ''),
);
console.log('run the service on it, fully offline, in another terminal:');
const environment = Object.entries(replayEnvironment(replay)).map(([name, value]) => `${name}=${value}`).join(' ');
console.log(`${environment} make start`);
const requestsEvery = Number(values['requests-every']);
const reporting = requestsEvery > 0 ? setInterval(() => {
  const requests = Object.fromEntries(REPLAY_VENUES.map((venue) => [venue, Object.values(replay.requests(venue)).reduce((sum, n) => sum + n, 0)]));
  console.log(`requests ${Date.now()} ${JSON.stringify(requests)}`);
}, requestsEvery) : null;
const stop = () => {
  if (reporting) clearInterval(reporting);
  streams.close();
  void replay.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
