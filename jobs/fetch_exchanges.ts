// The live market's minute with MARKET_SOURCE=exchanges: one run of the exchange source (venues,
// tickers, candles, price index, coin and venue state) and one of OKX's liquidation orders, each on
// a queue of its own, so runs of one never overlap; one ccxt instance per venue lives as long
// as the worker, keeping its markets, its rate limiter and its back-off between minutes, shared
// with the worker's stream holder (sharedExchangesSource); the liquidation poll passes the same
// venue gate (src/sources/exchanges/gate.ts).
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import type { Metrics } from '../src/metrics.ts';
import type { ExchangesSource, ExchangesTickResult } from '../src/sources/exchanges/index.ts';
import type { OkxLiquidations } from '../src/sources/exchanges/liquidations.ts';
import { type Query, queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';

interface ExchangeSources {
  market: ExchangesSource;
  liquidations: OkxLiquidations | null;
}

/** ccxt is loaded only by a worker that reads venues (it takes half a second to import) */
export async function exchangeSources(config: Config): Promise<ExchangeSources> {
  const [{ ensureVenueMarkets, exchangesSettings, sharedExchangesSource }, { OkxLiquidations }, { throughGate }] = await Promise.all([
    import('../src/sources/exchanges/index.ts'),
    import('../src/sources/exchanges/liquidations.ts'),
    import('../src/sources/exchanges/gate.ts'),
  ]);
  const market = sharedExchangesSource(exchangesSettings(config));
  const okx = async (query: Query) => {
    const venue = market.venue('okx');
    await ensureVenueMarkets(query, venue);
    return venue.exchange;
  };
  // a liquidation answer that is garbage is the poll's fault (its source health); a throttled one backs the venue off
  const gate = <T>(query: Query, work: () => Promise<T>) => throughGate(query, market.venue('okx'), 'throttling', work);
  return { market, liquidations: market.venueIds.includes('okx') ? new OkxLiquidations(okx, undefined, gate) : null };
}

/** The phases of a tick for its log line: `fetch 812 ms, bars 95 ms, …`. */
export function phasesLine(phases: ExchangesTickResult['phases']): string {
  return Object.entries(phases).map(([phase, ms]) => `${phase} ${Math.round(ms)} ms`).join(', ');
}

/** metrics: the process's registry, where each run's phases are observed (mdapi_exchange_tick_phase_seconds) */
export function exchangeTasks(config: Config, metrics?: Metrics): { fetch_exchanges: Task; fetch_okx_liquidations: Task } {
  if (config.MARKET_SOURCE !== 'exchanges') return { fetch_exchanges: async () => {}, fetch_okx_liquidations: async () => {} };
  let sources: Promise<ExchangeSources> | null = null;
  const load = () => (sources ??= exchangeSources(config));
  return {
    fetch_exchanges: async (_payload, helpers) => {
      const started = Date.now();
      const { market } = await load();
      const result = await helpers.withPgClient((client) => runSource(queryOf(client), market, { signal: helpers.abortSignal }));
      const down = Object.entries(result.venues).filter(([, run]) => run.state !== 'up').map(([id, run]) => `${id} (${run.error ?? run.state})`);
      const streamed = Object.entries(result.venues).filter(([, run]) => run.candlesStreamed).map(([id]) => id);
      metrics?.observeExchangeTick(result.phases);
      helpers.logger.info(
        `exchanges: ${result.requests} requests, ${result.candles} candles, ${result.bars} bars, ${result.excluded} left out, ` +
          `${Date.now() - started} ms (${phasesLine(result.phases)})${streamed.length ? `; candles streamed: ${streamed.join(', ')}` : ''}${down.length ? `; down: ${down.join(', ')}` : ''}`,
        { phasesMs: result.phases },
      );
    },
    fetch_okx_liquidations: async (_payload, helpers) => {
      const { liquidations } = await load();
      if (!liquidations) return;
      const result = await helpers.withPgClient((client) => runSource(queryOf(client), liquidations));
      if (result.inserted > 0) helpers.logger.info(`okx liquidations: ${result.inserted} new of ${result.received} from ${result.underlyings} swaps`);
    },
  };
}
