-- Parameters of the simulated venues (jobs/sources/simulated/exchanges.json). Which coins a venue
-- lists, its prices, spreads and volumes are pure functions of the seed, the venue's slug, the
-- coin and the time (sql/functions/410_simulated_exchanges.sql), so every run agrees.
create table market.simulated_exchanges (
  exchange_id int primary key references market.exchanges (id) on delete cascade,
  volume_share double precision not null check (volume_share >= 0),
  coverage double precision not null check (coverage between 0 and 1),
  spread_bps double precision not null check (spread_bps > 0),
  quotes text[] not null,
  symbol_format text not null,
  swap_format text,
  aliases jsonb not null default '{}'
);
comment on table market.simulated_exchanges is 'Demo venue parameters: volume_share of each listed coin''s 24h volume traded there, coverage (share of coins listed), typical spread in basis points, quote symbols (the first always listed), the raw symbol format ({B} base, {Q} quote, lowercase {b} {q}) of spot and perpetual swap markets, and symbol aliases (e.g. BTC -> XBT).';
