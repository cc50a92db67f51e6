-- The real liquidation feed: OKX's public liquidation orders of its swap markets, read through
-- ccxt by src/sources/exchanges/liquidations.ts into market.liquidations (000040).
insert into market.data_sources (name, kind, demo, description) values
  ('okx-liquidations', 'exchange', false,
   'Liquidation orders of OKX swap markets (OKX public REST liquidation-orders, state filled), polled every minute for the most valuable coins with an OKX swap.')
on conflict (name) do nothing;
