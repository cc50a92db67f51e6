// The market the price index tests build on: Bitcoin, Ethereum and Tether, five venues and the given
// spot markets (quote USD, EUR or USDT), as the catalogue and venue loads would leave them.
import { Decimal } from 'decimal.js';
import type { Sql } from '../../src/db/client.ts';

export const INDEX_VENUES = ['binance', 'coinbase', 'kraken', 'okx', 'bybit'];

/** A market: the venue, its unified symbol, the base coin's slug and the quote currency. */
export type IndexMarket = [venue: string, symbol: string, base: string, quote: string];

/** Writes the coins, venues and markets; returns the EUR per USD rate the index converts EUR quotes with. */
export async function loadIndexMarket(sql: Sql, markets: IndexMarket[]): Promise<Decimal> {
  await sql`insert into market.coins (slug, symbol, name, type, circulating_supply, source) values
    ('btc', 'BTC', 'Bitcoin', 'coin', 20000000, 'exchanges'), ('eth', 'ETH', 'Ethereum', 'coin', 120000000, 'exchanges'),
    ('usdt', 'USDT', 'Tether', 'token', 150000000000, 'exchanges')`;
  await sql`select market.load_exchange_venues(${JSON.stringify(INDEX_VENUES.map((slug) => ({ slug, name: slug })))}::text::jsonb)`;
  for (const [venue, symbol, base, quote] of markets) {
    await sql`insert into market.venue_markets (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id)
      select e.id, ${symbol}, ${symbol.replace('/', '')}, ${symbol.split('/')[0]!}, ${quote},
        (select id from market.coins where slug = ${base}), (select id from market.coins where upper(symbol) = ${quote})
      from market.exchanges e where e.slug = ${venue}`;
  }
  const [fx] = await sql`select rate::text from market.fx_latest where currency = 'EUR'`;
  return new Decimal(fx!.rate as string);
}
