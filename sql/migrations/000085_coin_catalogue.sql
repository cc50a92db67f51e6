-- The curated coin catalogue (src/sources/catalogue/coins.json, `mdapi import-coins`): each coin's
-- rank and stablecoin peg, its ids at outside metadata sources (CoinPaprika), and per-venue ticker
-- overrides where one symbol means different assets on different venues.
alter table market.coins
  add column catalogue_rank int check (catalogue_rank > 0),
  add column peg text check (peg ~ '^[A-Z]{3}$');
comment on column market.coins.catalogue_rank is 'Rank by market capitalisation in the curated catalogue when it was curated (1 = largest); null for coins outside it. Decides which coin a shared ticker symbol means when no venue override says otherwise (market.venue_coins).';
comment on column market.coins.peg is 'For a fiat stablecoin, the ISO code of the currency it is pegged to (USD, EUR); null otherwise.';

create table market.coin_source_ids (
  coin_id int not null references market.coins (id) on delete cascade,
  source text not null check (source ~ '^[a-z][a-z0-9_-]*$'),
  external_id text not null check (length(external_id) between 1 and 200),
  primary key (coin_id, source),
  unique (source, external_id)
);
comment on table market.coin_source_ids is 'A coin''s id at an outside source of metadata (e.g. coinpaprika: btc-bitcoin, coingecko: bitcoin), one per source; supplies from that source are matched through it (market.apply_coin_supplies).';
comment on column market.coin_source_ids.coin_id is 'The coin (market.coins).';
comment on column market.coin_source_ids.source is 'The outside source: coinpaprika, coingecko, ...';
comment on column market.coin_source_ids.external_id is 'The coin''s id at that source, unique per source.';

create table market.venue_symbol_overrides (
  exchange text not null check (exchange ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  symbol text not null check (symbol ~ '^\S{1,40}$'),
  coin_id int references market.coins (id) on delete cascade,
  primary key (exchange, symbol)
);
comment on table market.venue_symbol_overrides is 'Which coin a venue''s base currency code means where the default (the best-ranked coin with that symbol) is wrong: one ticker naming different assets on different venues, or a venue using its own ticker. Loaded from the catalogue''s venue_symbols.';
comment on column market.venue_symbol_overrides.exchange is 'The venue, as its ccxt id (binance, kraken, okx ...).';
comment on column market.venue_symbol_overrides.symbol is 'The venue''s base currency code as ccxt unifies it (upper case).';
comment on column market.venue_symbol_overrides.coin_id is 'The coin it means; null when it is no catalogue coin (its markets are ignored).';

insert into market.data_sources (name, kind, demo, description) values
  ('catalogue', 'import', false,
   'The curated coin catalogue shipped with the service (src/sources/catalogue/coins.json) or imported with mdapi import-coins: identity, links, contracts, descriptions and approximate supplies of the top coins by market capitalisation.'),
  ('coinpaprika', 'reference', false,
   'Circulating, total and maximum supply of catalogue coins from CoinPaprika''s public API (GET /v1/tickers, no key), refreshed hourly when METADATA_SOURCE=coinpaprika.');
