-- The Coins group's time series: candle history, marketcap history and the sparkline, read from
-- the bar level that matches the interval (raw 1-minute bars, or the 30m / 1h / 1d continuous
-- aggregates). PL/pgSQL throughout: inlined into a caller, a query on a real-time aggregate costs
-- the planner far more than it costs to run.

-- why: the history intervals, their bar width and retention, in one place for the functions and the API's meta
create or replace view api.coin_history_intervals as
select name, width, kept, retention
from (values
  (1, 'minutely', interval '1 minute', interval '8 days', '8 days'),
  (2, 'half-hourly', interval '30 minutes', interval '3 months', '3 months'),
  (3, 'hourly', interval '1 hour', interval '6 months', '6 months'),
  (4, 'daily', interval '1 day', null, 'full history')
) as intervals (position, name, width, kept, retention)
order by position;
comment on view api.coin_history_intervals is 'The interval values of the coin history endpoints: bar width, how long bars of that width are kept (null: forever) and the retention label the API returns in meta.retention. minutely reads market.coin_bars_1m, half-hourly market.coin_bars_30m, hourly market.coin_bars_1h, daily market.coin_bars_1d.';

-- why: one reader of the four bar levels, so every series function picks its level by name
create or replace function market.coin_bars(p_coin_id int, p_interval text, p_from timestamptz, p_to timestamptz, p_last int default null)
returns table ("time" timestamptz, open numeric, high numeric, low numeric, close numeric, volume numeric, marketcap numeric)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_from timestamptz := coalesce(p_from, '-infinity');
  v_to timestamptz := coalesce(p_to, 'infinity');
begin
  -- p_last: only the most recent bars are read (newest first, limited) and returned oldest first
  if p_interval = 'minutely' then
    return query select * from (select b.time, b.open, b.high, b.low, b.close, b.volume, b.marketcap from market.coin_bars_1m b
      where b.coin_id = p_coin_id and b.time >= v_from and b.time <= v_to order by b.time desc limit p_last) r order by r.time;
  elsif p_interval = 'half-hourly' then
    return query select * from (select b.time, b.open, b.high, b.low, b.close, b.volume, b.marketcap from market.coin_bars_30m b
      where b.coin_id = p_coin_id and b.time >= v_from and b.time <= v_to order by b.time desc limit p_last) r order by r.time;
  elsif p_interval = 'hourly' then
    return query select * from (select b.time, b.open, b.high, b.low, b.close, b.volume, b.marketcap from market.coin_bars_1h b
      where b.coin_id = p_coin_id and b.time >= v_from and b.time <= v_to order by b.time desc limit p_last) r order by r.time;
  elsif p_interval = 'daily' then
    return query select * from (select b.time, b.open, b.high, b.low, b.close, b.volume, b.marketcap from market.coin_bars_1d b
      where b.coin_id = p_coin_id and b.time >= v_from and b.time <= v_to order by b.time desc limit p_last) r order by r.time;
  else
    raise exception 'interval must be minutely, half-hourly, hourly or daily.' using errcode = 'MD422', column = 'interval';
  end if;
end;
$$;
comment on function market.coin_bars(int, text, timestamptz, timestamptz, int) is 'The bars of one coin at one interval (minutely, half-hourly, hourly, daily) starting within [p_from, p_to] (null: open), oldest first, prices numeric; with p_last only the p_last most recent of them.';

create or replace function api.coin_history(
  p_slug text,
  p_interval text default 'daily',
  p_start timestamptz default null,
  p_end timestamptz default null,
  p_limit int default 1000
) returns table (
  "time" text, price text, open text, high text, low text, close text,
  volume double precision, volume_24h double precision, marketcap double precision
)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_coin int;
  v_interval api.coin_history_intervals;
  v_from timestamptz;
  v_to timestamptz := coalesce(p_end, 'infinity');
  v_lookback interval;
begin
  v_coin := market.coin_id(p_slug);
  select * into v_interval from api.coin_history_intervals i where i.name = p_interval;
  if v_interval.name is null then
    raise exception 'interval must be minutely, half-hourly, hourly or daily.' using errcode = 'MD422', column = 'interval';
  end if;
  if p_limit is null or p_limit < 1 or p_limit > 2000 then
    raise exception 'limit must be from 1 to 2000.' using errcode = 'MD422', column = 'limit';
  end if;
  -- bars older than the interval's retention are on their way out: never serve them
  v_from := greatest(coalesce(p_start, '-infinity'), now() - v_interval.kept);

  -- volume_24h: the volume of the 24 hours that end with the bar, so the bars before the first one
  -- returned are read too: bars are aligned to the width, so at most v_lookback / width of them
  v_lookback := interval '24 hours' - v_interval.width;
  return query
  select market.iso_time(w.time), w.close::text, w.open::text, w.high::text, w.low::text, w.close::text,
    w.volume::double precision, w.volume_24h::double precision, w.marketcap::double precision
  from (
    select w.* from (
      select b.*, sum(b.volume) over (order by b.time range between v_lookback preceding and current row) as volume_24h
      from market.coin_bars(v_coin, p_interval, greatest(v_from - v_lookback, now() - v_interval.kept), v_to,
        p_limit + ceil(extract(epoch from v_lookback) / extract(epoch from v_interval.width))::int) b
    ) w
    where w.time >= v_from
    order by w.time desc
    limit p_limit
  ) w
  order by w.time;
end;
$$;
comment on function api.coin_history(text, text, timestamptz, timestamptz, int) is
'Candle history of the coin with this slug at p_interval (minutely, half-hourly, hourly, daily; see api.coin_history_intervals): the bars starting within [p_start, p_end] '
'(null: open) and within the interval''s retention (minutely 8 days, half-hourly 3 months, hourly 6 months, daily forever), cut to the most recent p_limit (1-2000) and returned oldest first. '
'Rows: time (bar start, ISO 8601 UTC), price (= close), open, high, low, close (decimal strings), volume (USD traded in the bar), volume_24h (USD traded in the 24 hours ending with the bar), marketcap (at the close; null without circulating supply). '
'Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/history (a date-only end there means the end of that day).';

create or replace function api.coin_marketcap_history(
  p_slug text,
  p_interval text default 'daily',
  p_start timestamptz default null,
  p_end timestamptz default null,
  p_limit int default 1000
) returns table ("time" text, marketcap double precision)
language sql stable
as $$
  select h.time, h.marketcap from api.coin_history(p_slug, p_interval, p_start, p_end, p_limit) h
$$;
comment on function api.coin_marketcap_history(text, text, timestamptz, timestamptz, int) is
'api.coin_history projected to (time, marketcap): the same interval, window, retention and most-recent-p_limit rules. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/marketcap-history.';

-- why: a light series for drawing: at most a few hundred closes from the coarsest level that still
-- resolves the period, with the true extremes of every bar of the period beside them
create or replace function api.coin_sparkline(p_slug text, p_period text default '7d') returns json
language plpgsql stable
as $$
declare
  v_coin int;
  v_span interval;
  v_level text;
  v_step interval;
  v_result json;
begin
  v_coin := market.coin_id(p_slug);
  select p.span, p.level, p.step into v_span, v_level, v_step
  from (values
    ('24h', interval '24 hours', 'minutely', interval '5 minutes'),
    ('7d', interval '7 days', 'half-hourly', interval '30 minutes'),
    ('30d', interval '30 days', 'hourly', interval '2 hours'),
    ('60d', interval '60 days', 'hourly', interval '4 hours'),
    ('90d', interval '90 days', 'hourly', interval '6 hours'),
    ('180d', interval '180 days', 'hourly', interval '12 hours'),
    ('365d', interval '365 days', 'daily', interval '1 day')
  ) as p (name, span, level, step)
  where p.name = p_period;
  if v_span is null then
    raise exception 'period must be 24h, 7d, 30d, 60d, 90d, 180d or 365d.' using errcode = 'MD422', column = 'period';
  end if;

  with bars as materialized (
    select * from market.coin_bars(v_coin, v_level, now() - v_span, null)
  ),
  points as (
    select time_bucket(v_step, b.time) as time, last(b.close, b.time) as price
    from bars b
    group by 1
  )
  select json_build_object(
    'points', coalesce((select json_agg(json_build_object('time', market.iso_time(p.time), 'price', p.price::text) order by p.time) from points p), '[]'::json),
    'low', (select min(b.low)::text from bars b),
    'high', (select max(b.high)::text from bars b),
    'change', (select round((last(b.close, b.time) / nullif(first(b.open, b.time), 0) - 1) * 100, 4)::double precision from bars b)
  ) into v_result;
  return v_result;
end;
$$;
comment on function api.coin_sparkline(text, text) is
'A compact price series of the coin with this slug over p_period (24h, 7d, 30d, 60d, 90d, 180d, 365d) as JSON {points: [{time, price}], low, high, change}: '
'points are the last close of each step (24h: 5 minutes from the minutely bars; 7d: 30 minutes; 30d/60d/90d/180d: 2/4/6/12 hours from the hourly bars; 365d: 1 day), stamped with the step''s start, oldest first, at most 366; '
'low and high are the extremes of every bar of the period; change is the percent move from the first bar''s open to the last close. Prices are decimal strings. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/sparkline.';
