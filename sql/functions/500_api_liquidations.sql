-- The Liquidations group: the raw feed (48 hours), hourly totals from the raw feed, daily totals
-- and today's summary from the daily rollup market.liquidations_1d, and the most liquidated coins.
-- Source coverage is OKX swap markets; the endpoints say so in meta.note. USD figures are numbers
-- (rounded to cents), prices decimal strings.

-- why: every function of the group checks its window the same way, for analysts as for the API
create or replace function market.check_liquidation_window(p_name text, p_value int, p_max int) returns void
language plpgsql immutable
as $$
begin
  if p_value is null or p_value < 1 or p_value > p_max then
    raise exception '% must be an integer from 1 to %.', p_name, p_max using errcode = 'MD422', column = p_name;
  end if;
end;
$$;
comment on function market.check_liquidation_window(text, int, int) is 'Raises MD422 (HTTP 422) unless p_value is within 1..p_max; p_name names the parameter in the message.';

-- why: the feed's rows, filtered, newest first, typed as the API returns them
create or replace function api.liquidation_rows(
  p_exchange text default null,
  p_instrument text default null,
  p_position text default null,
  p_order text default null,
  p_symbol text default null,
  p_min_usd numeric default null
) returns table (
  symbol text, exchange json, instrument text, "position" text, "order" text, price text,
  value_usd double precision, quantity double precision, liquidated_at text
)
language sql stable
as $$
  select l.symbol,
    json_build_object('id', e.id, 'slug', l.exchange, 'name', coalesce(e.name, upper(l.exchange))),
    l.instrument, l.position, l."order", l.price::text,
    round(l.value_usd, 2)::double precision, l.quantity::double precision,
    market.iso_time(l.time)
  from market.liquidations l
  left join market.exchanges e on e.slug = l.exchange
  -- retention drops whole one-hour chunks: the feed itself ends at exactly 48 hours
  where l.time > now() - interval '48 hours'
    and (p_exchange is null or l.exchange = lower(p_exchange))
    and (p_instrument is null or l.instrument = p_instrument)
    and (p_position is null or l.position = p_position)
    and (p_order is null or l."order" = p_order)
    and (p_symbol is null or upper(l.symbol) like upper(market.like_escape(p_symbol)) || '%')
    and (p_min_usd is null or l.value_usd >= p_min_usd)
  order by l.time desc, l.exchange, l.symbol
$$;
comment on function api.liquidation_rows(text, text, text, text, text, numeric) is
'The raw liquidation feed of the last 48 hours, newest first: symbol (venue instrument id, e.g. BTC-USDT-SWAP), exchange {id, slug, name}, instrument, position (long|short), order (buy|sell), '
'price (decimal string), value_usd and quantity (numbers), liquidated_at. Filters (null: any): p_exchange slug, p_instrument, p_position, p_order, p_symbol (case-insensitive prefix of the instrument id), '
'p_min_usd (value_usd at least). Source coverage: OKX swap markets. Paginated as the endpoint returns it: api.liquidation_feed.';

-- why: the paginated envelope's data and total from one scan of the matching rows
create or replace function api.liquidation_feed(
  p_exchange text default null,
  p_instrument text default null,
  p_position text default null,
  p_order text default null,
  p_symbol text default null,
  p_min_usd numeric default null,
  p_page int default 1,
  p_per_page int default 100
) returns json
language plpgsql stable
as $$
declare
  v_result json;
begin
  if p_page is null or p_page < 1 or p_per_page is null or p_per_page < 1 then
    raise exception 'page and per_page must be at least 1.' using errcode = 'MD422', column = 'page';
  end if;
  with matched as materialized (
    select r, row_number() over () as n
    from api.liquidation_rows(p_exchange, p_instrument, p_position, p_order, p_symbol, p_min_usd) r
  )
  select json_build_object(
    'total', (select count(*) from matched),
    'data', coalesce((
      select json_agg(m.r order by m.n) from matched m
      where market.on_page(m.n, p_page, p_per_page)), '[]'::json))
  into v_result;
  return v_result;
end;
$$;
comment on function api.liquidation_feed(text, text, text, text, text, numeric, int, int) is
'One page of api.liquidation_rows as JSON {"total": n, "data": [rows]}: the same filters plus p_page (1-based) and p_per_page. Endpoint: GET /api/v1/liquidations.';

-- why: the /liquidations/hourly endpoint: per-hour totals straight from the raw feed
create or replace function api.liquidations_hourly(p_hours int default 24)
returns table (hour text, liquidations int, total_usd double precision, long_usd double precision, short_usd double precision)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  perform market.check_liquidation_window('hours', p_hours, 48);
  return query
  with hours as (
    select h from generate_series(date_trunc('hour', now(), 'UTC') - (p_hours - 1) * interval '1 hour',
                                  date_trunc('hour', now(), 'UTC'), interval '1 hour') h
  ),
  totals as (
    select time_bucket(interval '1 hour', l.time) as h,
      count(*) as n,
      sum(l.value_usd) as total,
      coalesce(sum(l.value_usd) filter (where l.position = 'long'), 0) as long,
      coalesce(sum(l.value_usd) filter (where l.position = 'short'), 0) as short
    from market.liquidations l
    where l.time >= date_trunc('hour', now(), 'UTC') - (p_hours - 1) * interval '1 hour'
      and l.time > now() - interval '48 hours'
    group by 1
  )
  select market.iso_time(hours.h), coalesce(t.n, 0)::int,
    round(coalesce(t.total, 0), 2)::double precision,
    round(coalesce(t.long, 0), 2)::double precision,
    round(coalesce(t.short, 0), 2)::double precision
  from hours
  left join totals t on t.h = hours.h
  order by hours.h;
end;
$$;
comment on function api.liquidations_hourly(int) is
'Liquidations per UTC hour over the last p_hours hours (1-48, default 24; the raw feed is kept 48 hours), the current partial hour last, oldest first, every hour present (zeros when none): '
'hour, liquidations (count), total_usd, long_usd, short_usd (numbers). Source coverage: OKX swap markets. Endpoint: GET /api/v1/liquidations/hourly.';

-- why: daily figures come from the rollup, which outlives the raw feed
create or replace function api.liquidations_daily(p_days int default 30)
returns table (date text, total_usd double precision, long_usd double precision, short_usd double precision, longs int, shorts int)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  perform market.check_liquidation_window('days', p_days, 365);
  return query
  select market.iso_date((d.day at time zone 'UTC')::date),
    round(coalesce(d.total_usd, 0), 2)::double precision,
    round(coalesce(d.long_usd, 0), 2)::double precision,
    round(coalesce(d.short_usd, 0), 2)::double precision,
    coalesce(d.longs, 0)::int, coalesce(d.shorts, 0)::int
  from market.liquidations_1d d
  where d.day >= date_trunc('day', now(), 'UTC') - (p_days - 1) * interval '1 day'
  order by d.day;
end;
$$;
comment on function api.liquidations_daily(int) is
'Daily (UTC) liquidation totals of the last p_days calendar days including today (1-365, default 30), oldest first, days with data only: date, total_usd, long_usd, short_usd (numbers), longs, shorts (counts). '
'From the daily rollup market.liquidations_1d (kept forever, refreshed every 15 minutes: today''s row is partial). Source coverage: OKX swap markets. Endpoint: GET /api/v1/liquidations/daily.';

-- why: the /liquidations/netflow endpoint: the long-vs-short split per day, with its balance
create or replace function api.liquidation_netflow(p_days int default 30)
returns table (date text, long double precision, short double precision, total double precision, net double precision, longs int, shorts int)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  perform market.check_liquidation_window('days', p_days, 90);
  return query
  select d.date, d.long_usd, d.short_usd, d.total_usd, round((d.long_usd - d.short_usd)::numeric, 2)::double precision, d.longs, d.shorts
  from api.liquidations_daily(p_days) d
  order by d.date;
end;
$$;
comment on function api.liquidation_netflow(int) is
'Long-vs-short liquidation USD per day over the last p_days days including today (1-90, default 30), oldest first: date, long, short, total (numbers), net (long minus short), longs, shorts (counts). '
'From market.liquidations_1d. Source coverage: OKX swap markets. Endpoint: GET /api/v1/liquidations/netflow.';

-- why: the /liquidations/summary endpoint: today so far, with the long/short shares
create or replace function api.liquidation_summary()
returns table (date text, total_usd double precision, long_usd double precision, short_usd double precision, longs int, shorts int, dominance json)
language sql stable
as $$
  select market.iso_date((t.day at time zone 'UTC')::date),
    round(coalesce(d.total_usd, 0), 2)::double precision,
    round(coalesce(d.long_usd, 0), 2)::double precision,
    round(coalesce(d.short_usd, 0), 2)::double precision,
    coalesce(d.longs, 0)::int, coalesce(d.shorts, 0)::int,
    json_build_object(
      'long', round(100 * coalesce(d.long_usd, 0) / nullif(d.total_usd, 0), 2)::double precision,
      'short', round(100 * coalesce(d.short_usd, 0) / nullif(d.total_usd, 0), 2)::double precision)
  -- today's row even before its first liquidation is materialized: zeros, not no answer
  from (select date_trunc('day', now(), 'UTC') as day) t
  left join market.liquidations_1d d on d.day = t.day
$$;
comment on function api.liquidation_summary() is
'Today''s (UTC) liquidations so far, from market.liquidations_1d (refreshed every 15 minutes, so partial): date, total_usd, long_usd, short_usd (numbers), longs, shorts (counts), '
'dominance {long, short}: percent shares of total_usd (null when the total is 0). Always one row: zeros until the first liquidation of the day is materialized. Endpoint: GET /api/v1/liquidations/summary.';

-- why: the /liquidations/coins endpoint: which coins were liquidated most over the recent window
create or replace function api.top_liquidated_coins(p_hours int default 24, p_limit int default 8)
returns table (symbol text, name text, slug text, logo text, long double precision, short double precision, total double precision)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  perform market.check_liquidation_window('hours', p_hours, 48);
  perform market.check_liquidation_window('limit', p_limit, 20);
  return query
  select c.symbol, c.name, c.slug, market.logo_url('coins', c.slug, c.logo),
    round(coalesce(sum(l.value_usd) filter (where l.position = 'long'), 0), 2)::double precision,
    round(coalesce(sum(l.value_usd) filter (where l.position = 'short'), 0), 2)::double precision,
    round(sum(l.value_usd), 2)::double precision
  from market.liquidations l
  join market.coins c on c.id = l.coin_id
  where l.time > now() - p_hours * interval '1 hour'
  group by c.id
  order by sum(l.value_usd) desc, c.id
  limit p_limit;
end;
$$;
comment on function api.top_liquidated_coins(int, int) is
'The p_limit coins (1-20, default 8) with the largest liquidated USD value over the last p_hours hours (1-48, default 24), largest first: symbol, name, slug, logo, long, short, total (USD numbers). '
'Liquidations of instruments without a known base coin are left out. Source coverage: OKX swap markets. Endpoint: GET /api/v1/liquidations/coins.';
