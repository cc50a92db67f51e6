-- The delay from a minute's close to its index bar, per venue and minute (issue 46, item 3): what the
-- operators read to see how soon the venues' candles reach the price index, streams against REST.
create table market.index_bar_delays (
  exchange_id int not null references market.exchanges (id) on delete cascade,
  minute timestamptz not null,
  bar_at timestamptz not null,
  delay_seconds numeric not null,
  stream_candles int not null default 0 check (stream_candles >= 0),
  rest_candles int not null default 0 check (rest_candles >= 0),
  primary key (exchange_id, minute)
);
create index index_bar_delays_minute on market.index_bar_delays (minute);
comment on table market.index_bar_delays is 'Per venue and 1-minute bar: when the index bars of the minute were last built with the venue''s candles of it (the final build counts: a late candle rebuilds the bar and moves bar_at), and how long after the minute''s close that was. Written by market.record_index_bar_delays (the stream holder''s market.finish_stream_minutes and the minute job); kept two days.';
comment on column market.index_bar_delays.exchange_id is 'The venue (market.exchanges).';
comment on column market.index_bar_delays.minute is 'The start of the minute.';
comment on column market.index_bar_delays.bar_at is 'When the minute''s index bars were last built with the venue''s candles of it, by the writer''s clock.';
comment on column market.index_bar_delays.delay_seconds is 'bar_at minus the minute''s close (its start plus one minute), in seconds: the delay from the minute''s close to its index bar.';
comment on column market.index_bar_delays.stream_candles is 'The venue''s candles of the minute written from its stream (market.venue_bars_1m path stream) when the bar was built.';
comment on column market.index_bar_delays.rest_candles is 'The venue''s candles of the minute written from its REST answers (path rest) when the bar was built.';
