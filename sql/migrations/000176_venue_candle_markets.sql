-- Operators (issue 46): each venue's markets on its candle stream and on REST fallback, as its
-- stream holder counted them at its last tick (market.record_venue_candle_markets), so that
-- market.venue_health, /status and /metrics read them from SQL whichever process holds the venue.
alter table market.venue_status
  add column stream_markets int check (stream_markets >= 0),
  add column rest_fallback_markets int check (rest_fallback_markets >= 0),
  add column candle_markets_at timestamptz;
comment on column market.venue_status.stream_markets is 'Markets whose one-minute candles the venue''s stream delivers (subscribed, receiving), as its stream holder counted them at candle_markets_at; null before any holder counted.';
comment on column market.venue_status.rest_fallback_markets is 'Markets of the index (market.venue_candle_markets) whose candles the holder takes from REST alone at candle_markets_at: the venue cannot stream them, their subscription failed or is not yet receiving.';
comment on column market.venue_status.candle_markets_at is 'When the holder last counted stream_markets and rest_fallback_markets (each tick, STREAM_INTERVAL_MS); older than 2 minutes: no holder streams the venue''s candles (market.venue_health shows null).';
