-- Live prices (issue 35): the latest price each venue market published through its stream, and the
-- live index price per coin built from them by the price index's rules, at most once a second.
-- The minute bars stay built from the venues' closed candles (market.build_index_bars).
insert into market.data_sources (name, kind, demo, description) values
  ('stream', 'exchange', false, 'Live venue prices between the minute bars: the venues'' public ticker streams (ccxt pro), or the simulated venues with the demo market; feeds the live index price and the streaming API.')
on conflict (name) do nothing;

create table market.live_venue_prices (
  exchange_id int not null references market.exchanges (id) on delete cascade,
  coin_id int not null references market.coins (id) on delete cascade,
  quote text not null check (quote ~ '^\S{1,30}$'),
  quote_coin_id int references market.coins (id) on delete set null,
  price numeric not null check (price > 0),
  at timestamptz not null,
  primary key (coin_id, exchange_id, quote)
);
comment on table market.live_venue_prices is 'The latest price of each venue spot market as its live stream published it (last trade or ticker, in the quote currency), overwritten in place; the inputs of the live index price (market.refresh_live_prices). A venue whose stream fails or stalls is left out by age (market.refresh_live_prices'' p_max_age).';
comment on column market.live_venue_prices.quote is 'The quote currency code (USD, EUR, USDT, BTC …).';
comment on column market.live_venue_prices.quote_coin_id is 'The catalogue coin the quote is (stablecoins, BTC …); null for a fiat quote.';
comment on column market.live_venue_prices.price is 'Latest price in units of the quote.';
comment on column market.live_venue_prices.at is 'When the venue published it (else when it was received).';

create sequence market.live_price_version;
comment on sequence market.live_price_version is 'Versions of live index prices: each change of a coin''s live price takes the next one (the SSE event id).';

create table market.live_prices (
  coin_id int primary key references market.coins (id) on delete cascade,
  price numeric not null check (price > 0),
  venues int not null check (venues > 0),
  at timestamptz not null,
  version bigint not null
);
create index live_prices_version on market.live_prices (version);
comment on table market.live_prices is 'The live index price of each coin (USD), rebuilt at most once a second from market.live_venue_prices by the price index''s rules (market.refresh_live_prices); one row per coin, overwritten. Between minutes it runs ahead of market.coin_bars_1m, which stays built from closed candles.';
comment on column market.live_prices.price is 'Live index price in USD, 10 significant digits.';
comment on column market.live_prices.venues is 'Venue markets the price was made of (after the rules left some out).';
comment on column market.live_prices.at is 'When it was computed.';
comment on column market.live_prices.version is 'From market.live_price_version at its last change: a client that saw version v has missed exactly the rows above v.';
