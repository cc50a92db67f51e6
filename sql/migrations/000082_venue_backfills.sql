-- `mdapi backfill` (src/sources/exchanges/backfill.ts): how far the history of each venue market
-- has been read, per timeframe, so that a killed backfill resumes where it stopped and a finished
-- one re-run reads only what is new. The ranges of one market never overlap across timeframes, so
-- bars of different widths never meet in market.coin_bars_1m (sql/functions/416_venue_backfill.sql).
create table market.venue_backfills (
  exchange_id int not null,
  symbol text not null,
  timeframe text not null check (timeframe in ('1d', '1h', '1m')),
  range_from timestamptz not null,
  range_to timestamptz not null,
  done_until timestamptz not null,
  candles bigint not null default 0 check (candles >= 0),
  requests int not null default 0 check (requests >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (exchange_id, symbol, timeframe, range_from),
  foreign key (exchange_id, symbol) references market.venue_markets (exchange_id, symbol) on delete cascade,
  check (range_from < range_to and done_until between range_from and range_to)
);
comment on table market.venue_backfills is 'History read from the real venues by mdapi backfill: per venue market and timeframe (1d, 1h, 1m) a range [range_from, range_to) of candle start times, read up to done_until (finished_at once whole), with the candles written and the requests made. The ranges of one market never overlap, whatever their timeframe: daily before 6 months ago, hourly before 8 days ago, minutely after.';
