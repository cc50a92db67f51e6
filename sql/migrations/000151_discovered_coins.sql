-- Coins the venues bring (issue 45): a venue's base code that maps to no coin becomes one, named
-- after the metadata list or, without an entry there, after the venue (market.ingest_venue_markets).
alter table market.coins
  add column discovered_by text check (discovered_by in ('metadata', 'venue'));
comment on column market.coins.discovered_by is 'How a coin the venues brought was named: metadata (after the metadata list''s entry, market.coin_metadata_list; its renames followed), venue (a coin of its own, slug <symbol>-<venue>); null for coins of the catalogue, the demo market or an import.';
