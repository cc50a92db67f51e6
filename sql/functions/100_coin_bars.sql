-- Bookkeeping for bars written into the past (backfills and imports) and the refresh windows of
-- the coin aggregates. The refresh itself (CALL refresh_continuous_aggregate) cannot run inside a
-- transaction block, so src/sources/aggregates.ts issues the calls these functions plan.

-- why: retention must not drop old raw bars (or old 30m/1h rows) before the aggregates above have them
create or replace function app.set_coin_bar_retention(p_scheduled boolean) returns int
language sql volatile
set search_path = app, pg_temp
as $$
  select count(*)::int from (
    select public.alter_job(j.job_id, scheduled => p_scheduled)
    from timescaledb_information.jobs j
    where j.proc_name = 'policy_retention'
      and j.hypertable_schema = 'market'
      and j.hypertable_name in ('coin_bars_1m', 'coin_bars_30m', 'coin_bars_1h')
      and j.scheduled is distinct from p_scheduled
  ) changed;
$$;
comment on function app.set_coin_bar_retention(boolean) is 'Pauses (false) or resumes (true) the retention policies of market.coin_bars_1m, _30m and _1h; returns how many jobs changed.';

-- why: a writer of old bars records its window in the same transaction as the bars, so a crash before the refresh loses nothing
create or replace function app.begin_coin_bar_backfill(p_source text, p_start timestamptz, p_end timestamptz) returns bigint
language plpgsql volatile
set search_path = app, pg_temp
as $$
declare
  v_id bigint;
begin
  insert into app.coin_bar_backfills (source, window_start, window_end)
  values (p_source, p_start, p_end)
  returning id into v_id;
  perform app.set_coin_bar_retention(false);
  return v_id;
end;
$$;
comment on function app.begin_coin_bar_backfill(text, timestamptz, timestamptz) is 'Records a window of old bars awaiting the refresh of the coin aggregates and pauses bar retention meanwhile; returns the window id.';

-- why: retention resumes only when no writer has windows pending
create or replace function app.end_coin_bar_backfills(p_ids bigint[]) returns int
language plpgsql volatile
set search_path = app, pg_temp
as $$
declare
  v_left int;
begin
  delete from app.coin_bar_backfills where id = any (p_ids);
  select count(*) into v_left from app.coin_bar_backfills;
  if v_left = 0 then
    perform app.set_coin_bar_retention(true);
  end if;
  return v_left;
end;
$$;
comment on function app.end_coin_bar_backfills(bigint[]) is 'Closes refreshed backfill windows; resumes bar retention when none is left. Returns the number still pending.';

-- why: the refresh calls for a window, in dependency order (30m before 1h before 1d), aligned to
-- each aggregate's buckets, ending before the current bucket (which real-time aggregation keeps
-- live), and cut into pieces so that no single call holds the embedded database for long
create or replace function app.coin_aggregate_refresh_plan(
  p_start timestamptz,
  p_end timestamptz,
  p_now timestamptz default now()
) returns table (step int, aggregate text, window_start timestamptz, window_end timestamptz)
language sql stable
set search_path = app, pg_temp
as $$
  -- Each call has a fixed cost (about 0.2 s on the embedded database for the daily level) besides
  -- the rows it writes: pieces are as long as the level's density allows. Its source is dense
  -- (a row per bucket of the level below) within that source's retention, sparse beyond (older
  -- history written in wider bars): there pieces are those of app.refresh_piece_length.
  with levels (level, aggregate, width, piece, dense_since) as (
    values (1, 'market.coin_bars_30m', interval '30 minutes', interval '30 days', p_now - interval '8 days'),
           (2, 'market.coin_bars_1h', interval '1 hour', interval '180 days', p_now - interval '3 months'),
           (3, 'market.coin_bars_1d', interval '1 day', interval '1825 days', p_now - interval '6 months')
  ),
  bounds as (
    select level, aggregate, width, piece, dense_since,
      date_bin(width, p_start, timestamptz '2000-01-01') as lo,
      least(date_bin(width, p_end - interval '1 microsecond', timestamptz '2000-01-01') + width,
            date_bin(width, p_now, timestamptz '2000-01-01')) as hi
    from levels
  ),
  split as (
    select b.*, least(b.hi, greatest(b.lo, date_bin(app.refresh_piece_length(b.width), b.dense_since, timestamptz '2000-01-01'))) as dense
    from bounds b
    where b.hi > b.lo
  ),
  pieces as (
    select s.level, s.aggregate, r.window_start, r.window_end
    from split s
    cross join lateral (
      select * from app.refresh_pieces(s.lo, s.dense, s.piece) where s.dense > s.lo
      union all
      select * from app.refresh_pieces(s.dense, s.hi, app.refresh_piece_length(s.width)) where s.hi > s.dense
    ) r
  )
  select (row_number() over (order by level, window_start))::int, aggregate, window_start, window_end
  from pieces
  order by level, window_start;
$$;
comment on function app.coin_aggregate_refresh_plan(timestamptz, timestamptz, timestamptz) is 'The refresh_continuous_aggregate calls that bring the 30m, 1h and 1d coin aggregates up to date over a window of raw bars, in order.';

-- why: all pending backfill windows merged into one range, so one refresh pass serves them all
create or replace function app.pending_coin_bar_backfills()
returns table (ids bigint[], window_start timestamptz, window_end timestamptz)
language sql stable
set search_path = app, pg_temp
as $$
  select array_agg(id order by id), min(window_start), max(window_end)
  from app.coin_bar_backfills
  having count(*) > 0;
$$;
comment on function app.pending_coin_bar_backfills() is 'Ids and merged extent of the backfill windows still awaiting their aggregate refresh; no row when none.';
