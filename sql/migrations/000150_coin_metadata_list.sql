-- The whole coin list of an outside metadata source (CoinPaprika's GET /v1/coins, issue 45): what a
-- venue's unknown base code is called, ranked and typed when it becomes a coin (market.ingest_venue_markets),
-- and the names discovered coins follow. Loaded whole by market.load_coin_metadata_list, at most once a day.
create table market.coin_metadata_list (
  source text not null references market.data_sources (name),
  external_id text not null check (length(external_id) between 1 and 200),
  symbol text not null check (length(symbol) between 1 and 100),
  name text not null check (length(name) between 1 and 400),
  rank int not null default 0 check (rank >= 0),
  active boolean not null default true,
  type text,
  loaded_at timestamptz not null default now(),
  primary key (source, external_id)
);
create index coin_metadata_list_symbol on market.coin_metadata_list (source, upper(symbol));
comment on table market.coin_metadata_list is 'Every coin an outside metadata source lists (coinpaprika: GET /v1/coins), as last loaded whole (market.load_coin_metadata_list): a venue''s base code that maps to no coin is named after the best-ranked active entry of that symbol, and coins discovered from it follow its renames.';
comment on column market.coin_metadata_list.source is 'The metadata source (market.data_sources): coinpaprika.';
comment on column market.coin_metadata_list.external_id is 'The coin''s id at the source (btc-bitcoin); market.coin_source_ids links a coin to it.';
comment on column market.coin_metadata_list.symbol is 'Ticker symbol as the source writes it; venues'' base codes are matched to it case-insensitively.';
comment on column market.coin_metadata_list.name is 'The coin''s name at the source.';
comment on column market.coin_metadata_list.rank is 'The source''s rank by market capitalisation (1 = largest); 0 = unranked. Decides between entries sharing a symbol.';
comment on column market.coin_metadata_list.active is 'False when the source lists the coin as inactive: never chosen for a venue''s code.';
comment on column market.coin_metadata_list.type is 'coin or token as the source says; anything else is read as token.';
comment on column market.coin_metadata_list.loaded_at is 'When the list this entry belongs to was loaded (the whole list carries one time).';

update market.data_sources set description =
  'CoinPaprika''s public API, no key, when METADATA_SOURCE=coinpaprika: circulating, total and maximum supply of the coins it knows (GET /v1/tickers, hourly), and its whole coin list (GET /v1/coins, daily) that names the coins the venues bring.'
where name = 'coinpaprika';
