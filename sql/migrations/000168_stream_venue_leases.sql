-- Holders share the venues: the stream lease becomes one row per venue (market.stream_leases, name:
-- the venue's ccxt id; the demo market's simulated venues are the one unit `simulated`), and every
-- running holder announces itself with a heartbeat, so each can work out its fair share of the
-- venues (market.take_stream_venues) before it holds any.
create table market.stream_holders (
  holder text primary key check (length(holder) between 1 and 200),
  venues text[] not null,
  started_at timestamptz not null default now(),
  expires_at timestamptz not null
);
comment on table market.stream_holders is 'The processes running a stream holder (mdapi stream, workers with STREAM=on): who (host:pid:nonce), the venues it can stream, since when, and until when unless it renews (each tick, market.take_stream_venues). A holder whose row expired (STREAM_LEASE_SECONDS after its last tick) is dead and no longer counts in the venues'' fair share.';
comment on column market.stream_holders.holder is 'The process: host:pid:nonce.';
comment on column market.stream_holders.venues is 'The venues it can stream (its EXCHANGES that ccxt pro streams, or simulated on the demo market): the holders sharing a venue divide it among themselves.';
comment on column market.stream_holders.started_at is 'When it first announced itself.';
comment on column market.stream_holders.expires_at is 'Until when it counts as running unless it renews.';

comment on table market.stream_leases is 'The live venue streams, one lease per venue (name: the venue''s ccxt id; simulated: the demo market''s venues together): which process (host:pid:nonce) holds it, since when, and until when unless renewed. Each venue is held by exactly one process; taken, renewed and shed by market.take_stream_venues, given up by market.release_stream_venues.';

-- the one lease of before (name stream) has no venue behind it, nor do its functions
delete from market.stream_leases where name = 'stream';
drop function if exists market.take_stream_lease(text, text, numeric);
drop function if exists market.release_stream_lease(text, text);
