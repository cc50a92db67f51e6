-- Sentiment computed from the project's own market data (sql/functions/450..470, docs/sentiment.md).
-- Fear & Greed, Bull/Bear and the market-wide indicator tally are snapshots: the refresh every 15
-- minutes replaces them, no history is kept. Altseason keeps one row per day, forever.
create table market.sentiment_snapshots (
  kind text not null check (kind in ('fear_greed', 'bull_bear', 'indicator_tally')),
  coin_id int references market.coins (id) on delete cascade,
  reading json not null,
  computed_at timestamptz not null default now(),
  unique nulls not distinct (kind, coin_id)
);
comment on table market.sentiment_snapshots is 'The current sentiment readings, rewritten by market.refresh_sentiment() every 15 minutes (only the current reading exists): kind fear_greed and bull_bear per scope (coin_id null: the whole market; else one coin), indicator_tally for the market only. reading is what the API returns.';
comment on column market.sentiment_snapshots.coin_id is 'The coin of a per-coin reading; null for the market-wide reading.';
comment on column market.sentiment_snapshots.reading is 'The reading as the endpoint returns it (see api.fear_greed, api.bull_bear, api.market_indicator_tally).';

create table market.altseason_days (
  day date primary key,
  index int not null check (index between 0 and 100),
  outperformers int not null check (outperformers >= 0),
  coins int not null check (coins > 0 and outperformers <= coins),
  look_back_days int not null check (look_back_days > 0),
  computed_at timestamptz not null default now()
);
comment on table market.altseason_days is 'Altseason index per UTC day (today''s row is provisional, rewritten every 15 minutes): of the top-100 altcoins by marketcap that day (bitcoin and USD-pegged coins excluded), how many outperformed bitcoin over the look-back (90 days). Kept forever. See market.altseason_compute().';
comment on column market.altseason_days.index is 'round(100 * outperformers / coins), 0-100: 75 or more is altcoin season, 25 or less bitcoin season.';
