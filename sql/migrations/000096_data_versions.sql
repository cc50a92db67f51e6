-- The data versions the API's response cache is keyed by (issue 16): every refresh that changes
-- what the API serves bumps its group's version (app.bump_data_version) and announces it with
-- NOTIFY data_version, so every API process drops what it cached for the older version at once.
create table app.data_versions (
  name text primary key,
  version bigint not null default 0,
  changed_at timestamptz not null default now()
);
comment on table app.data_versions is 'One row per group of served data (market, sentiment, indicators, fx, content): a counter bumped by app.bump_data_version at the end of each refresh that changed it. The API caches responses per version and gives Last-Modified from changed_at.';
comment on column app.data_versions.name is 'The group: market (coin state, bars, tickers, exchanges, catalogue, supplies), sentiment, indicators (the indicator tally), fx (reference rates) or content (wallets, articles, videos, insights).';
comment on column app.data_versions.version is 'Increases by one with each refresh of the group; only its changes matter, not its value.';
comment on column app.data_versions.changed_at is 'When the group was last refreshed (the bump''s wall-clock time).';
insert into app.data_versions (name) values ('market'), ('sentiment'), ('indicators'), ('fx'), ('content');
