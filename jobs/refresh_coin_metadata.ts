// Coin supplies, hourly, and the coin list, daily: with METADATA_SOURCE=coinpaprika, CoinPaprika's
// public tickers (src/sources/coinpaprika.ts) update the circulating, total and maximum supply of the
// coins it knows, and its coin list names the coins the venues bring. With the default (none) the
// catalogue's supplies stay. A failed download writes nothing,
// is recorded in the source's health, and graphile-worker retries.
import type { Task } from 'graphile-worker';
import type { Config } from '../src/config.ts';
import { coinpaprikaSupplies } from '../src/sources/coinpaprika.ts';
import { queryOf } from '../src/db/query.ts';
import { runSource } from '../src/sources/source.ts';

export const refreshCoinMetadata =
  (config: Pick<Config, 'METADATA_SOURCE' | 'COINPAPRIKA_URL'>): Task =>
  async (_payload, helpers) => {
    if (config.METADATA_SOURCE !== 'coinpaprika') return;
    const result = await helpers.withPgClient((client) => runSource(queryOf(client), coinpaprikaSupplies(config.COINPAPRIKA_URL)));
    const list = result.coinList ? `; coin list of ${result.coinList.coins}: ${result.coinList.adopted} coins named, ${result.coinList.renamed} renamed` : '';
    helpers.logger.info(`coinpaprika: ${result.tickers} tickers, supplies of ${result.updated} coins changed${list}`);
  };
