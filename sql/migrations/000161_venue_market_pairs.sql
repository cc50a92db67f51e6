-- At the size of the whole spot market (issue 45) the price index looks up, for every candle, the
-- market of its coin, venue and quote (market.build_index_bars): without this index each lookup
-- walked all of the venue's markets (thousands on Gate or MEXC), listed or not.
create index venue_markets_pair on market.venue_markets (base_coin_id, exchange_id, quote);
