-- Resumption of a live price stream (Last-Event-ID): every change of the last STREAM_REPLAY_SECONDS,
-- so a client that reconnects within it gets each change it missed, not only each coin's latest.
create table market.live_price_changes (
  version bigint primary key,
  coin_id int not null references market.coins (id) on delete cascade,
  price numeric not null check (price > 0),
  venues int not null check (venues > 0),
  at timestamptz not null
);
-- trimmed by age many times a second
create index live_price_changes_at on market.live_price_changes (at);
comment on table market.live_price_changes is 'Every change of a live index price (market.live_prices) of the last STREAM_REPLAY_SECONDS (60 s), by version: what a stream reconnecting with Last-Event-ID is replayed from (market.live_price_changes_since); older ones are trimmed by market.refresh_live_prices, and a client behind them gets a snapshot instead.';
comment on column market.live_price_changes.version is 'The version the change took (market.live_price_version), the SSE event id.';
comment on column market.live_price_changes.price is 'Live index price in USD, 10 significant digits.';
comment on column market.live_price_changes.venues is 'Venue markets the price was made of.';
comment on column market.live_price_changes.at is 'When it was computed.';
