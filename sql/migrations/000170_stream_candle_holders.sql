-- The minute job and the stream holders divide the venues' candles (issue 46): a holder says whether
-- it holds its venues' one-minute candle feeds (STREAM_CANDLES=on), so that the minute job leaves the
-- candles of a venue a live holder holds that way to the holder (market.stream_candle_venues) and
-- polls only the others'. take_stream_venues gains the flag, so its old three-argument form goes
-- (sql/functions/960_live_prices.sql makes the new one).
alter table market.stream_holders add column candles boolean not null default false;
comment on column market.stream_holders.candles is 'Whether the holder holds its venues'' one-minute candle feeds (STREAM_CANDLES=on): the candles of the venues it holds are then its (market.stream_candle_venues), and the minute job polls none of them.';

drop function if exists market.take_stream_venues(text, text[], numeric);
