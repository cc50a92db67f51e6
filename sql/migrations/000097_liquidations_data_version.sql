-- The raw liquidation feed gets a data version of its own: its ingests (OKX, the simulator) bump it,
-- so the feed, hourly totals and most-liquidated coins can be cached until the next ingest. The
-- daily routes read market.liquidations_1d, which TimescaleDB's scheduler refreshes without
-- announcing it; they are not cached (src/api/liquidations.ts).
insert into app.data_versions (name) values ('liquidations') on conflict (name) do nothing;
comment on table app.data_versions is 'One row per group of served data (market, sentiment, indicators, fx, content, liquidations): a counter bumped by app.bump_data_version at the end of each refresh that changed it. The API caches responses per version and gives Last-Modified from changed_at.';
comment on column app.data_versions.name is 'The group: market (coin state, bars, tickers, exchanges, catalogue, supplies), sentiment, indicators (the indicator tally), fx (reference rates), content (wallets, articles, videos, insights) or liquidations (the raw liquidation feed).';
