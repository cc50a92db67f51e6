-- CSV import of OHLCV history (mdapi import-candles): validation, the coin, and the bars, in one
-- statement and so in one transaction: a file with a bad row imports nothing. The caller then
-- refreshes the aggregates over the returned window (outside any transaction).

-- why: a time that matches the ISO pattern may still not exist (2024-02-30); it is reported, not
-- raised. pg_input_is_valid would do this without a subtransaction, but exists only from PostgreSQL 16.
create or replace function market.parse_import_time(p_time text, p_zoned boolean) returns timestamptz
-- stable, as PostgreSQL's own casts to timestamptz are
language plpgsql stable
as $$
begin
  return case when p_zoned then p_time::timestamptz else p_time::timestamp at time zone 'UTC' end;
exception when data_exception then
  return null;
end;
$$;
comment on function market.parse_import_time(text, boolean) is
'An import row''s time: with an offset (p_zoned) as given, else as UTC; null when it is not a valid date-time.';

-- why: every malformed row is reported with its line number, before anything is written
create or replace function market.import_candles(
  p_slug text,
  p_symbol text,
  p_name text,
  p_lines int[],
  p_time text[],
  p_open text[],
  p_high text[],
  p_low text[],
  p_close text[],
  p_volume text[]
) returns table (
  coin_id int, coin_created boolean, bars int, inserted int, updated int, removed int,
  window_start timestamptz, window_end timestamptz, backfill_id bigint
)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_errors text[];
  v_error_count int;
  v_supply numeric;
  v_width interval;
begin
  create temporary table import_rows on commit drop as
  select u.line, u.time, u.open, u.high, u.low, u.close, u.volume,
    u.time ~ '^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$' as local_time,
    u.time ~ '^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)$' as zoned_time
  from unnest(p_lines, p_time, p_open, p_high, p_low, p_close, p_volume)
    as u (line, time, open, high, low, close, volume);

  -- Parse what parses; a column that does not stays null and is reported below.
  create temporary table import_parsed on commit drop as
  select r.line,
    case
      when r.local_time or r.zoned_time then market.parse_import_time(r.time, r.zoned_time)
    end as time,
    case when r.open ~ '^\d+(\.\d+)?([eE][+-]?\d+)?$' then r.open::numeric end as open,
    case when r.high ~ '^\d+(\.\d+)?([eE][+-]?\d+)?$' then r.high::numeric end as high,
    case when r.low ~ '^\d+(\.\d+)?([eE][+-]?\d+)?$' then r.low::numeric end as low,
    case when r.close ~ '^\d+(\.\d+)?([eE][+-]?\d+)?$' then r.close::numeric end as close,
    case when r.volume ~ '^\d+(\.\d+)?([eE][+-]?\d+)?$' then r.volume::numeric end as volume
  from import_rows r;

  with problems as (
    select p.line, m.message
    from import_parsed p
    left join lateral (
      select min(o.line) as first_line from import_parsed o where o.time = p.time and o.line < p.line
    ) d on true
    cross join lateral (values
      (case when p.time is null then 'time is not an ISO 8601 date or date-time' end),
      (case when p.time is not null and p.time <> date_trunc('minute', p.time) then 'time is not a whole minute' end),
      (case when p.open is null then 'open is not a decimal number' end),
      (case when p.high is null then 'high is not a decimal number' end),
      (case when p.low is null then 'low is not a decimal number' end),
      (case when p.close is null then 'close is not a decimal number' end),
      (case when p.volume is null then 'volume is not a decimal number' end),
      (case when least(p.open, p.high, p.low, p.close) <= 0 then 'prices must be greater than zero' end),
      (case when p.high < greatest(p.open, p.close, p.low) then 'high is below open, close or low' end),
      (case when p.low > least(p.open, p.close) then 'low is above open or close' end),
      (case when d.first_line is not null then format('time %s already on line %s', to_char(p.time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI"Z"'), d.first_line) end)
    ) as m (message)
    where m.message is not null
  )
  select count(*)::int, (array_agg(format('line %s: %s', line, message) order by line, message))[1:20]
  into v_error_count, v_errors
  from problems;
  if v_error_count > 0 then
    raise exception '% malformed row(s), nothing imported', v_error_count
      using errcode = '22P02', detail = array_to_string(v_errors, E'\n')
        || case when v_error_count > 20 then format(E'\n(%s more)', v_error_count - 20) else '' end;
  end if;
  if not exists (select from import_parsed) then
    raise exception 'no rows to import' using errcode = '22P02';
  end if;

  coin_created := false;
  select c.id, c.circulating_supply into coin_id, v_supply from market.coins c
  where c.id in (select i from market.coin_ids(array[p_slug]) i);
  if not found then
    if p_symbol is null or p_name is null then
      raise exception 'coin % does not exist: give its symbol and name to create it', p_slug using errcode = '22023';
    end if;
    insert into market.data_sources (name, kind, demo, description)
    values ('csv', 'import', false, 'OHLCV history imported from CSV files (mdapi import-candles).')
    on conflict (name) do nothing;
    insert into market.coins (slug, symbol, name, type, status, source)
    values (p_slug, p_symbol, p_name, 'coin', 'active', 'csv')
    returning id into coin_id;
    coin_created := true;
  end if;

  -- The bar width is the smallest spacing of the file (one minute for a single row); the file
  -- is authoritative for the span it covers: other bars of the coin inside it are removed.
  select coalesce(min(g.gap), interval '1 minute') into v_width
  from (select lead(p.time) over (order by p.time) - p.time as gap from import_parsed p) g;
  select min(p.time), max(p.time) + v_width into window_start, window_end from import_parsed p;
  bars := (select count(*) from import_parsed);

  delete from market.coin_bars_1m b
  where b.coin_id = import_candles.coin_id and b.time >= window_start and b.time < window_end
    and not exists (select from import_parsed p where p.time = b.time);
  get diagnostics removed = row_count;

  with written as (
    insert into market.coin_bars_1m as b (time, coin_id, open, high, low, close, volume, marketcap)
    select p.time, import_candles.coin_id, p.open, p.high, p.low, p.close, p.volume, round(p.close * v_supply, 2)
    from import_parsed p
    on conflict on constraint coin_bars_1m_pkey do update set
      open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close,
      volume = excluded.volume, marketcap = excluded.marketcap
    where (b.open, b.high, b.low, b.close, b.volume, b.marketcap)
      is distinct from (excluded.open, excluded.high, excluded.low, excluded.close, excluded.volume, excluded.marketcap)
    returning (xmax = 0) as fresh
  )
  select count(*) filter (where fresh), count(*) filter (where not fresh) into inserted, updated from written;

  if inserted + updated + removed > 0 then
    backfill_id := app.begin_coin_bar_backfill('csv', window_start, window_end);
  end if;
  drop table import_rows, import_parsed;
  return next;
end;
$$;
comment on function market.import_candles(text, text, text, int[], text[], text[], text[], text[], text[], text[]) is
  'Imports OHLCV bars (USD; CSV columns as text arrays with their line numbers) for the coin with slug p_slug, creating it (source csv) when p_symbol and p_name are given. Rejects the whole file when any row is malformed (SQLSTATE 22P02, one line per problem in the detail). Idempotent: identical bars are left alone; bars of the coin inside the file''s span that the file lacks are removed. Returns what changed and the window whose aggregates the caller must refresh (backfill_id null when nothing changed).';
revoke execute on function market.import_candles(text, text, text, int[], text[], text[], text[], text[], text[], text[]) from public;
