-- Real venues read through ccxt (src/sources/exchanges): what each venue lists, its raw 1-minute
-- candles, its fetch state, and the minutes the price index left a venue out of. The coin bars
-- (market.coin_bars_1m) are built from the candles by market.build_index_bars, and flow on
-- through the same path as every other source.
insert into market.data_sources (name, kind, demo, description) values
  ('exchanges', 'exchange', false, 'Live spot markets of real exchanges (ccxt): tickers, 1-minute candles, the cross-venue price index.')
on conflict (name) do nothing;

-- Every market a venue lists (or listed): its unified and raw symbols, and the catalogue coins it
-- trades. Rows are never deleted: a market gone from the venue is marked delisted.
create table market.venue_markets (
  exchange_id int not null references market.exchanges (id) on delete cascade,
  symbol text not null check (symbol ~ '^\S{1,60}$'),
  exchange_symbol text not null check (length(exchange_symbol) between 1 and 60),
  base text not null check (base ~ '^\S{1,30}$'),
  quote text not null check (quote ~ '^\S{1,30}$'),
  base_coin_id int references market.coins (id) on delete set null,
  quote_coin_id int references market.coins (id) on delete set null,
  instrument text not null default 'spot' check (instrument in ('spot', 'margin', 'swap', 'future', 'option')),
  contract_size numeric check (contract_size > 0),
  active boolean not null default true,
  listed_at timestamptz not null default now(),
  delisted_at timestamptz,
  candles_until timestamptz,
  primary key (exchange_id, symbol)
);
create index venue_markets_base on market.venue_markets (base_coin_id) where active;
comment on table market.venue_markets is 'Markets of the real venues as ccxt loads them: unified symbol (BASE/QUOTE, swaps BASE/QUOTE:SETTLE), raw venue id, base and quote currency codes, the catalogue coins they map to (null: not a catalogue coin), instrument, contract size (swaps), whether listed now, and how far its 1-minute candles are stored (candles_until: the end of the newest stored closed minute).';

-- Raw 1-minute candles per venue market, in the market's quote currency, kept 8 days like the coin bars.
create table market.venue_bars_1m (
  time timestamptz not null,
  coin_id int not null,
  exchange_id int not null,
  quote text not null,
  open numeric not null check (open > 0),
  high numeric not null,
  low numeric not null,
  close numeric not null check (close > 0),
  volume numeric not null check (volume >= 0),
  primary key (coin_id, time, exchange_id, quote),
  check (low > 0 and low <= open and low <= close and high >= open and high >= close)
);
-- No foreign keys, as for market.coin_bars_1m: the ingest function resolves venues and coins.
select create_hypertable('market.venue_bars_1m', 'time', chunk_time_interval => interval '1 day', create_default_indexes => false);
select add_retention_policy('market.venue_bars_1m', drop_after => interval '8 days');
comment on table market.venue_bars_1m is 'Raw 1-minute OHLCV candles of each venue market (prices in the quote currency, volume in base units) as the venues published them; the inputs of the price index (market.build_index_bars). Kept 8 days.';

-- A venue's fetch state, shared by every worker: back-off survives restarts.
create table market.venue_status (
  exchange_id int primary key references market.exchanges (id) on delete cascade,
  failures int not null default 0 check (failures >= 0),
  backoff_until timestamptz,
  last_success_at timestamptz,
  last_error text,
  last_error_at timestamptz,
  markets_loaded_at timestamptz,
  requests bigint not null default 0
);
comment on table market.venue_status is 'Fetch state of each real venue: consecutive failed runs, until when it is skipped (exponential back-off), last success, last error, when its markets were last loaded, and the requests made to it since it was added.';

-- Components the price index left out, with the reason: the audit trail of the index.
create table market.price_index_exclusions (
  time timestamptz not null,
  coin_id int not null,
  exchange_id int not null,
  quote text not null,
  price_usd numeric,
  median_usd numeric,
  reason text not null check (reason in ('outlier', 'low_volume', 'no_rate')),
  primary key (coin_id, time, exchange_id, quote)
);
select create_hypertable('market.price_index_exclusions', 'time', chunk_time_interval => interval '1 day', create_default_indexes => false);
select add_retention_policy('market.price_index_exclusions', drop_after => interval '8 days');
comment on table market.price_index_exclusions is 'Venue markets the price index left out of a coin''s minute, and why: outlier (further than the bound from the cross-venue median, median_usd), low_volume (24h USD volume under the threshold), no_rate (the quote currency has no USD rate). Kept 8 days. See market.build_index_bars for the method.';
