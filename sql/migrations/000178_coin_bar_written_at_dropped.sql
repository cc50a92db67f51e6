-- One record of the delay from a minute's close to its index bar: market.index_bar_delays (per venue
-- and minute, the final build, written by the stream holder and the minute job alike). The first-write
-- stamp on every index bar (000177) measured the same thing a second way: market.venue_health, the
-- metrics and the bench now read market.index_bar_delays, and the stamp goes.
alter table market.coin_bars_1m drop column written_at;
