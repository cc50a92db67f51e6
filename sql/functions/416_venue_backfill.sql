-- `mdapi backfill`: which candle ranges of a venue's markets are still to be read, and how far each
-- has been read (market.venue_backfills). Ranges follow the spec's retention: daily candles before
-- 6 months ago, hourly ones up to 8 days ago, 1-minute ones since; a market's ranges never overlap,
-- whatever their timeframe, so each coin bar of market.coin_bars_1m has one width.

-- why: the plan is made in one place, against what earlier runs already cover, so a re-run reads
-- only what is new and ranges of different widths never meet
create or replace function market.plan_venue_backfill(
  p_exchange text,
  p_timeframes text[],
  p_coins text[] default null,
  p_since timestamptz default null,
  p_now timestamptz default now()
) returns table (symbol text, coin_slug text, timeframe text, range_from timestamptz, range_to timestamptz, done_until timestamptz)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange int;
  -- no venue has candles before the first Bitcoin exchanges opened (July 2010)
  v_since timestamptz := greatest(coalesce(p_since, '2010-07-01 00:00+00'), '2010-07-01 00:00+00');
  v_day timestamptz := date_trunc('day', p_now - interval '6 months', 'UTC');
  v_hour timestamptz := date_trunc('hour', p_now - interval '8 days', 'UTC');
  v_minute timestamptz := date_trunc('minute', p_now, 'UTC');
  v_coins int[];
begin
  -- the coins asked for and the coins they are quoted in (USDT …): the index prices a quote from its own candles
  if p_coins is not null then
    select array_agg(distinct x.id) into v_coins from (
      select i as id from market.coin_ids(p_coins) i
      union
      select m.quote_coin_id from market.venue_markets m
      where m.base_coin_id in (select i from market.coin_ids(p_coins) i) and m.active and m.instrument = 'spot' and m.quote_coin_id is not null
    ) x;
  end if;
  v_exchange := market.venue_id(p_exchange);
  if exists (select from unnest(p_timeframes) t where t not in ('1d', '1h', '1m')) then
    raise exception 'timeframes are 1d, 1h or 1m, not %', p_timeframes using errcode = '22023';
  end if;

  create temporary table backfill_pieces on commit drop as
  with markets as (
    select m.symbol from market.venue_candle_markets(p_exchange) m
    where p_coins is null or m.coin_id = any (v_coins)
  ),
  targets as (
    -- a coarser range also ends where finer history of the market already starts
    select m.symbol, t.timeframe, t.unit, t.lo,
      least(t.hi, (select min(b.range_from) from market.venue_backfills b
        where b.exchange_id = v_exchange and b.symbol = m.symbol and b.timeframe = any (t.finer))) as hi
    from markets m
    cross join (values
      ('1d', 'day', v_since, v_day, array['1h', '1m']),
      ('1h', 'hour', greatest(v_since, v_day), v_hour, array['1m']),
      ('1m', 'minute', greatest(v_since, v_hour), v_minute, array[]::text[])
    ) as t (timeframe, unit, lo, hi, finer)
    where t.timeframe = any (p_timeframes)
  ),
  free as (
    -- the target less every range of the market already planned, of any timeframe
    select t.symbol, t.timeframe, t.unit, unnest(tstzmultirange(tstzrange(t.lo, t.hi))
      - coalesce((select range_agg(tstzrange(b.range_from, b.range_to)) from market.venue_backfills b
          where b.exchange_id = v_exchange and b.symbol = t.symbol), '{}'::tstzmultirange)) as span
    from targets t
    where t.lo < t.hi
  ),
  aligned as (
    -- whole candles only: a candle reaching outside its range would overlap bars of another width
    select f.symbol, f.timeframe,
      case when date_trunc(f.unit, lower(f.span), 'UTC') = lower(f.span) then lower(f.span)
        else date_trunc(f.unit, lower(f.span), 'UTC') + ('1 ' || f.unit)::interval end as lo,
      date_trunc(f.unit, upper(f.span), 'UTC') as hi
    from free f
  )
  select a.symbol, a.timeframe, a.lo, a.hi from aligned a where a.lo < a.hi;

  -- a piece continuing a range of the same timeframe extends it: one row per contiguous range
  with extended as (
    update market.venue_backfills b set range_to = p.hi, finished_at = null, updated_at = now()
    from backfill_pieces p
    where b.exchange_id = v_exchange and b.symbol = p.symbol and b.timeframe = p.timeframe and b.range_to = p.lo
    returning p.symbol, p.timeframe, p.lo
  )
  delete from backfill_pieces p using extended x where x.symbol = p.symbol and x.timeframe = p.timeframe and x.lo = p.lo;
  insert into market.venue_backfills (exchange_id, symbol, timeframe, range_from, range_to, done_until)
  select v_exchange, p.symbol, p.timeframe, p.lo, p.hi, p.lo from backfill_pieces p;
  drop table backfill_pieces;

  return query
  select b.symbol, c.slug, b.timeframe, b.range_from, b.range_to, b.done_until
  from market.venue_backfills b
  join market.venue_markets m on m.exchange_id = b.exchange_id and m.symbol = b.symbol
  join market.coins c on c.id = m.base_coin_id
  where b.exchange_id = v_exchange and b.finished_at is null and b.timeframe = any (p_timeframes)
    and m.active and (p_coins is null or c.id = any (v_coins))
  order by array_position(array['1d', '1h', '1m'], b.timeframe), c.slug, b.range_from;
end;
$$;
comment on function market.plan_venue_backfill(text, text[], text[], timestamptz, timestamptz) is 'Plans mdapi backfill on one venue: for the coin markets of market.venue_candle_markets (when p_coins is set: those coins and the coins they are quoted in, which the index needs) and the timeframes asked (1d, 1h, 1m), records in market.venue_backfills the ranges not yet covered: daily from p_since (default July 2010) to 6 months before p_now, hourly to 8 days before, 1-minute to p_now''s minute, each ending where finer history of the market starts and aligned to whole candles. Returns every unfinished range of those markets and timeframes, with how far it has been read.';
revoke execute on function market.plan_venue_backfill(text, text[], text[], timestamptz, timestamptz) from public;

-- why: progress is durable page by page, so a killed backfill loses at most the page in flight
create or replace function market.record_venue_backfill(
  p_exchange text, p_symbol text, p_timeframe text, p_range_from timestamptz, p_done_until timestamptz,
  p_candles int default 0, p_requests int default 0
) returns boolean
language sql volatile
set search_path = market, public, pg_temp
as $$
  update market.venue_backfills b set
    done_until = greatest(b.done_until, least(p_done_until, b.range_to)),
    candles = b.candles + greatest(p_candles, 0),
    requests = b.requests + greatest(p_requests, 0),
    updated_at = now(),
    finished_at = case when p_done_until >= b.range_to then now() end
  where b.exchange_id in (select i from market.exchange_ids(array[p_exchange]) i) and b.symbol = p_symbol and b.timeframe = p_timeframe
    and b.range_from = p_range_from
  returning b.finished_at is not null;
$$;
comment on function market.record_venue_backfill(text, text, text, timestamptz, timestamptz, int, int) is 'Records the progress of one backfill range (venue, market symbol, timeframe, range start): read up to p_done_until, with the candles written and requests made meanwhile; the range is finished once read to its end. Returns whether it is.';
revoke execute on function market.record_venue_backfill(text, text, text, timestamptz, timestamptz, int, int) from public;
