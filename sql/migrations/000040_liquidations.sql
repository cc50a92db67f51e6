-- Derivatives liquidations. The raw feed (one row per liquidation order) is kept 48 hours; the
-- daily rollup, a continuous aggregate of it, is kept forever. Coverage is OKX swap markets: every
-- response of the Liquidations group says so (meta.note).
create table market.liquidations (
  time timestamptz not null,
  exchange text not null check (exchange ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  symbol text not null check (symbol ~ '^[A-Za-z0-9$.\-]{1,60}$'),
  coin_id int,
  instrument text not null check (instrument in ('future', 'option', 'swap', 'spot', 'margin')),
  position text not null check (position in ('long', 'short')),
  "order" text not null check ("order" in ('buy', 'sell')),
  price numeric not null check (price > 0),
  quantity numeric not null check (quantity > 0),
  value_usd numeric not null check (value_usd >= 0),
  source text not null references market.data_sources (name),
  primary key (exchange, symbol, time)
);
-- One-hour chunks: retention drops whole chunks, so the feed is pruned within the hour after 48 hours.
select create_hypertable('market.liquidations', 'time', chunk_time_interval => interval '1 hour', create_default_indexes => false);
create index liquidations_time on market.liquidations (time desc);
create index liquidations_coin_time on market.liquidations (coin_id, time desc);
select add_retention_policy('market.liquidations', drop_after => interval '48 hours');
comment on table market.liquidations is 'Raw liquidation feed: one row per liquidation order, kept 48 hours (retention policy; whole one-hour chunks are dropped). Source coverage: OKX swap markets. Daily totals live on in market.liquidations_1d.';
comment on column market.liquidations.exchange is 'Slug of the venue (market.exchanges.slug), e.g. okx.';
comment on column market.liquidations.symbol is 'The venue''s instrument id, e.g. BTC-USDT-SWAP.';
comment on column market.liquidations.coin_id is 'The base coin of the instrument (market.coins.id); null when it is not a known coin.';
comment on column market.liquidations.position is 'Side of the liquidated position: long (closed by a sell order) or short (closed by a buy order).';
comment on column market.liquidations."order" is 'Side of the fill that closed the position: sell for a long, buy for a short.';
comment on column market.liquidations.price is 'Fill price in the quote currency (USD-pegged for USDT swaps).';
comment on column market.liquidations.quantity is 'Size of the liquidated position in base-coin units.';
comment on column market.liquidations.value_usd is 'USD value of the liquidated position (price times quantity for USD-quoted contracts).';

-- Daily totals, kept forever. materialized_only: today's row is what the last refresh (every 15
-- minutes) saw, not recomputed per request. The refresh window starts 47 hours back, inside the
-- raw feed's 48 hours, so a refresh never recomputes a day whose raw rows retention has dropped;
-- it ends at the newest row (end_offset null), so today's partial row is included.
create materialized view market.liquidations_1d
with (timescaledb.continuous, timescaledb.materialized_only = true) as
select time_bucket(interval '1 day', time) as day,
  sum(value_usd) as total_usd,
  sum(value_usd) filter (where position = 'long') as long_usd,
  sum(value_usd) filter (where position = 'short') as short_usd,
  count(*) filter (where position = 'long') as longs,
  count(*) filter (where position = 'short') as shorts
from market.liquidations
group by time_bucket(interval '1 day', time)
with no data;
select set_chunk_time_interval('market.liquidations_1d', interval '365 days');
select add_continuous_aggregate_policy('market.liquidations_1d',
  start_offset => interval '47 hours', end_offset => null, schedule_interval => interval '15 minutes');
comment on view market.liquidations_1d is 'Daily (UTC) liquidation totals across venues and instruments: total/long/short USD and long/short counts. Kept forever; refreshed every 15 minutes, so today''s row is partial.';

insert into market.data_sources (name, kind, demo, description) values
  ('simulated-liquidations', 'simulated', true,
   'Made-up OKX swap liquidations of the demo coins, a deterministic function of the simulated market''s seed, the coin and the minute (sql/functions/510_simulated_liquidations.sql).');
