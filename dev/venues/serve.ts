// `make venues-replay`: the loopback replay of all its venues on a fixed port, with the ECB's daily
// rates and CoinPaprika's tickers from the recorded fixtures, for fully offline manual runs: it
// prints the environment to give `make start`. Options: --port N (default 8780), --coins N
// (default 300: the catalogue's coins by rank).
import { parseArgs } from 'node:util';
import { REPLAY_VENUES } from './replay.ts';
import { replayEnvironment, startOfflineReplay } from './offline.ts';

const { values } = parseArgs({ options: { port: { type: 'string', default: '8780' }, coins: { type: 'string', default: '300' } } });
const port = Number(values.port);
const coins = Number(values.coins);
if (!Number.isInteger(port) || port < 0 || !Number.isInteger(coins) || coins < 1) {
  console.error('usage: node dev/venues/serve.ts [--port N] [--coins N]');
  process.exit(2);
}
const { replay, scenario } = await startOfflineReplay({ coins, port });
const markets = REPLAY_VENUES.map((venue) => `${venue} ${scenario.venues[venue]?.markets.length ?? 0}`).join(', ');
console.log(`venue replay on ${replay.url}: ${scenario.coins.length} coins; markets ${markets}; ECB rates and CoinPaprika tickers recorded`);
console.log('run the service on it, fully offline, in another terminal:');
const environment = Object.entries(replayEnvironment(replay)).map(([name, value]) => `${name}=${value}`).join(' ');
console.log(`${environment} make start`);
const stop = () => void replay.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
