-- A venue whose stream broke off is readmitted into the live price only after its stream has been
-- clean for a while (STREAM_READMIT_SECONDS), not at its REST resynchronisation; its last prices
-- stay where they are, so their age (mdapi_live_price_age_seconds) keeps growing while it is out.
create table market.live_venue_streams (
  exchange_id int primary key references market.exchanges (id) on delete cascade,
  cut_at timestamptz not null,
  clean_since timestamptz
);
comment on table market.live_venue_streams is 'The venues whose live stream broke off at least once (disconnected, stalled, garbage; market.forget_live_venue_prices): when it last did, and since when it has written prices again without breaking off. Its prices count in the live index price (market.refresh_live_prices) only once clean_since is STREAM_READMIT_SECONDS old; a venue never cut has no row and counts.';
comment on column market.live_venue_streams.cut_at is 'When its stream last broke off.';
comment on column market.live_venue_streams.clean_since is 'When it first wrote prices after that (its REST resynchronisation); null while it is still out.';

-- the live index takes the readmission period and the replay window: the old signature goes
drop function if exists market.refresh_live_prices(interval, interval, numeric, numeric);
