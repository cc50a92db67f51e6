// `make venues-replay`: the loopback replay of the six venues on a fixed port, for manual runs and
// `MARKET_SOURCE=exchanges EXCHANGE_URLS=... make start`. Options: --port N (default 8780), --coins N (default 300).
import { parseArgs } from 'node:util';
import { makeScenario, REPLAY_VENUES, startVenueReplay } from './replay.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8780' }, coins: { type: 'string', default: '300' } } });
const port = Number(values.port);
const coins = Number(values.coins);
if (!Number.isInteger(port) || port < 0 || !Number.isInteger(coins) || coins < 1) {
  console.error('usage: node test/venues/serve.ts [--port N] [--coins N]');
  process.exit(2);
}
const scenario = makeScenario({ coins });
const replay = await startVenueReplay(scenario, { port });
const markets = REPLAY_VENUES.map((venue) => `${venue} ${scenario.venues[venue]?.markets.length ?? 0}`).join(', ');
console.log(`venue replay on ${replay.url}: ${coins} coins; markets ${markets}`);
console.log(`EXCHANGE_URLS=${REPLAY_VENUES.map((venue) => `${venue}=${replay.baseUrl(venue)}`).join(',')}`);
const stop = () => void replay.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
