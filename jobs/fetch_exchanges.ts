// The live market's minute with MARKET_SOURCE=exchanges: one run of the exchange source (venues,
// tickers, candles, price index, coin and venue state). Queued on the market queue, so two runs
// never overlap; one ccxt instance per venue lives as long as the worker, keeping its markets and
// its rate limiter between minutes.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import type { ExchangesSource } from '../src/sources/exchanges/index.ts';
import { clientQuery, runSource } from '../src/sources/source.ts';

/** ccxt is loaded only by a worker that reads venues (it takes half a second to import) */
export async function exchangesSource(config: Config): Promise<ExchangesSource> {
  const [{ ExchangesSource }, { parseExchangeUrls, parseExchanges }] = await Promise.all([
    import('../src/sources/exchanges/index.ts'),
    import('../src/sources/exchanges/venues.ts'),
  ]);
  return new ExchangesSource({
    venues: parseExchanges(config.EXCHANGES),
    urls: parseExchangeUrls(config.EXCHANGE_URLS),
    timeoutMs: config.EXCHANGE_TIMEOUT_MS,
    budgetMs: config.EXCHANGE_BUDGET_MS,
  });
}

export const fetchExchanges = (config: Config): Task => {
  if (config.MARKET_SOURCE !== 'exchanges') return async () => {};
  let source: Promise<ExchangesSource> | null = null;
  return async (_payload, helpers) => {
    const started = Date.now();
    source ??= exchangesSource(config);
    const venues = await source;
    const result = await helpers.withPgClient((client) => runSource(clientQuery(client), venues, { signal: helpers.abortSignal }));
    const down = Object.entries(result.venues).filter(([, run]) => run.state !== 'up').map(([id, run]) => `${id} (${run.error ?? run.state})`);
    helpers.logger.info(
      `exchanges: ${result.requests} requests, ${result.candles} candles, ${result.bars} bars, ${result.excluded} left out, ` +
        `${Date.now() - started} ms${down.length ? `; down: ${down.join(', ')}` : ''}`,
    );
  };
};
