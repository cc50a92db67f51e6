-- Candles from the venues' streams (issue 46): each venue candle remembers which path wrote it, so
-- that the venue's REST candle of a minute always wins over its stream candle (a stream candle never
-- overwrites a stored minute; a REST candle overwrites a stream one) and a disagreement between the
-- two is counted; the candles each path wrote and the stream candles refused are counted per venue
-- (GET /metrics: mdapi_venue_candles_total). ingest_venue_candles gains the path and returns the
-- disagreements, so its old three-argument form goes (sql/functions/415_exchange_venues.sql makes the new one).
alter table market.venue_bars_1m add column path text not null default 'rest' check (path in ('rest', 'stream'));
comment on column market.venue_bars_1m.path is 'Which path wrote the candle: rest (the venue''s REST candles: the minute job, the stream holder''s fills, the backfill) or stream (the venue''s candle or trade stream, src/sources/stream/candles.ts). A REST candle replaces a stream one; a stream candle never replaces a stored one.';

create table market.venue_candle_counts (
  exchange_id int not null references market.exchanges (id) on delete cascade,
  outcome text not null check (outcome in ('rest', 'stream', 'disagreement', 'refused_future', 'refused_not_decimal', 'refused_volume_down', 'refused_unlisted')),
  candles bigint not null default 0 check (candles >= 0),
  primary key (exchange_id, outcome)
);
comment on table market.venue_candle_counts is 'Venue 1-minute candles counted since the venue was added, per outcome: rest and stream (written by each path), disagreement (a REST and a stream candle of the same minute with different values: the REST one kept), and the stream candles refused (refused_future: a minute not yet begun; refused_not_decimal: a price or volume that is no decimal; refused_volume_down: a volume lower than earlier in the same minute; refused_unlisted: a market the venue does not list), whose minutes the venue''s REST candles stand for. GET /metrics: mdapi_venue_candles_total.';
comment on column market.venue_candle_counts.exchange_id is 'The venue (market.exchanges).';
comment on column market.venue_candle_counts.outcome is 'rest, stream, disagreement, refused_future, refused_not_decimal, refused_volume_down or refused_unlisted.';
comment on column market.venue_candle_counts.candles is 'Candles of that outcome so far.';

drop function if exists market.ingest_venue_candles(text, jsonb, interval);
