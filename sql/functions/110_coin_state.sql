-- The current figures of every coin, computed set-based from the bars and written to
-- market.coin_state in one statement.

-- why: list endpoints read one indexed row per coin instead of aggregating bars per request
create or replace function market.write_coin_state(p_now timestamptz default now(), p_full boolean default false) returns int
language sql volatile
set search_path = market, public, pg_temp
as $$
  with latest as (
    -- the newest bar at or before p_now: raw if the coin has raw bars, else the daily aggregate
    select c.id as coin_id, c.status, c.circulating_supply, c.total_supply, c.max_supply,
      coalesce(r.time, d.time) as time, coalesce(r.close, d.close) as price, r.time is not null as raw
    from market.coins c
    left join lateral (
      select b.time, b.close from market.coin_bars_1m b
      where b.coin_id = c.id and b.time <= p_now
      order by b.time desc limit 1
    ) r on true
    left join lateral (
      select b.time, b.close from market.coin_bars_1d b
      where r.time is null and b.coin_id = c.id and b.time <= p_now
      order by b.time desc limit 1
    ) d on true
  ),
  reference as (
    -- closes of the last bars at least 24 hours and 7 days old: from the raw bars when the coin
    -- has any (a younger coin has none that old: no change), else from the daily aggregate
    select l.coin_id,
      case when l.raw then
        (select b.close from market.coin_bars_1m b
         where b.coin_id = l.coin_id and b.time <= p_now - interval '24 hours' order by b.time desc limit 1)
      else
        (select b.close from market.coin_bars_1d b
         where b.coin_id = l.coin_id and b.time <= p_now - interval '24 hours' order by b.time desc limit 1)
      end as close_24h,
      case when l.raw then
        (select b.close from market.coin_bars_1m b
         where b.coin_id = l.coin_id and b.time <= p_now - interval '7 days' order by b.time desc limit 1)
      else
        (select b.close from market.coin_bars_1d b
         where b.coin_id = l.coin_id and b.time <= p_now - interval '7 days' order by b.time desc limit 1)
      end as close_7d
    from latest l
    where l.price is not null
  ),
  recent as (
    select b.coin_id,
      sum(b.volume) as volume_24h,
      max(b.high) as high_24h,
      last(b.time, b.high) as high_24h_at,
      min(b.low) as low_24h,
      first(b.time, b.low) as low_24h_at,
      first(b.open, b.time) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_open,
      max(b.high) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_high,
      min(b.low) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_low,
      last(b.close, b.time) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_close
    from market.coin_bars_1m b
    where b.time > p_now - interval '24 hours' and b.time <= p_now
    group by b.coin_id
  ),
  -- All-time high and low from the whole daily history: on a full refresh, and for coins that
  -- have none yet. Otherwise the stored extremes are extended with the last 24 hours' bars.
  rescan as (
    select l.coin_id
    from latest l
    left join market.coin_state s on s.coin_id = l.coin_id
    where l.price is not null and (p_full or s.ath is null)
  ),
  daily as (
    -- the exists() is a one-time filter: with nothing to rescan the daily history is not read
    select b.coin_id, b.time, b.high, b.low
    from market.coin_bars_1d b
    where exists (select from rescan) and b.time <= p_now and b.coin_id in (select coin_id from rescan)
  ),
  highs as (
    select distinct on (coin_id) coin_id, high as ath, time as ath_at
    from daily order by coin_id, high desc, time
  ),
  lows as (
    select distinct on (coin_id) coin_id, low as atl, time as atl_at
    from daily order by coin_id, low, time
  ),
  extremes as (
    select c.id as coin_id,
      coalesce(h.ath, s.ath) as ath, coalesce(h.ath_at, s.ath_at) as ath_at,
      coalesce(lo.atl, s.atl) as atl, coalesce(lo.atl_at, s.atl_at) as atl_at
    from market.coins c
    left join market.coin_state s on s.coin_id = c.id and c.id not in (select coin_id from rescan)
    left join highs h on h.coin_id = c.id
    left join lows lo on lo.coin_id = c.id
  ),
  figures as (
    select l.coin_id, l.status, l.price, l.time as last_updated,
      coalesce(rc.volume_24h, 0) as volume_24h,
      round(((l.price / nullif(rf.close_24h, 0) - 1) * 100)::numeric, 4)::double precision as change_24h,
      round(((l.price / nullif(rf.close_7d, 0) - 1) * 100)::numeric, 4)::double precision as change_7d,
      round(l.price * l.circulating_supply, 2) as marketcap,
      round(l.price * coalesce(l.max_supply, l.total_supply), 2) as fully_diluted_valuation,
      case when rc.high_24h > x.ath or x.ath is null then rc.high_24h else x.ath end as ath,
      case when rc.high_24h > x.ath or x.ath is null then rc.high_24h_at else x.ath_at end as ath_at,
      case when rc.low_24h < x.atl or x.atl is null then rc.low_24h else x.atl end as atl,
      case when rc.low_24h < x.atl or x.atl is null then rc.low_24h_at else x.atl_at end as atl_at,
      rc.today_open, rc.today_high, rc.today_low, rc.today_close
    from latest l
    left join reference rf on rf.coin_id = l.coin_id
    left join recent rc on rc.coin_id = l.coin_id
    left join extremes x on x.coin_id = l.coin_id
  ),
  ranked as (
    select f.coin_id,
      row_number() over (order by f.marketcap desc nulls last, f.volume_24h desc, f.coin_id)::int as rank,
      f.marketcap * 100 / nullif(sum(f.marketcap) over (), 0) as dominance
    from figures f
    where f.status = 'active' and f.price is not null
  ),
  change_ranks as (
    select r.coin_id,
      row_number() over (order by f.change_24h desc nulls last, r.rank)::int as change_rank_24h,
      row_number() over (order by f.change_7d desc nulls last, r.rank)::int as change_rank_7d
    from ranked r join figures f using (coin_id)
  ),
  written as (
    insert into market.coin_state as s (
      coin_id, price, volume_24h, change_24h, change_7d, marketcap, fully_diluted_valuation, dominance,
      rank, change_rank_24h, change_rank_7d, ath, ath_at, atl, atl_at,
      today_open, today_high, today_low, today_close, last_updated, refreshed_at)
    select f.coin_id, f.price, f.volume_24h, f.change_24h, f.change_7d, f.marketcap, f.fully_diluted_valuation,
      round(r.dominance, 6)::double precision,
      r.rank, cr.change_rank_24h, cr.change_rank_7d,
      -- a daily aggregate not yet refreshed must not hide a higher high (lower low) of the current price
      greatest(f.ath, f.price), case when f.ath is null or f.price > f.ath then f.last_updated else f.ath_at end,
      least(f.atl, f.price), case when f.atl is null or f.price < f.atl then f.last_updated else f.atl_at end,
      f.today_open, f.today_high, f.today_low, f.today_close, f.last_updated, now()
    from figures f
    left join ranked r using (coin_id)
    left join change_ranks cr using (coin_id)
    on conflict (coin_id) do update set
      price = excluded.price, volume_24h = excluded.volume_24h, change_24h = excluded.change_24h,
      change_7d = excluded.change_7d, marketcap = excluded.marketcap,
      fully_diluted_valuation = excluded.fully_diluted_valuation, dominance = excluded.dominance,
      rank = excluded.rank, change_rank_24h = excluded.change_rank_24h, change_rank_7d = excluded.change_rank_7d,
      ath = excluded.ath, ath_at = excluded.ath_at, atl = excluded.atl, atl_at = excluded.atl_at,
      today_open = excluded.today_open, today_high = excluded.today_high, today_low = excluded.today_low,
      today_close = excluded.today_close, last_updated = excluded.last_updated, refreshed_at = excluded.refreshed_at
    returning 1
  )
  select count(*)::int from written;
$$;
comment on function market.write_coin_state(timestamptz, boolean) is 'Recomputes market.coin_state for every coin as of p_now (default now()): price, 24h volume, 24h/7d changes and their ranks, marketcap, fully diluted valuation, rank, dominance, all-time high/low, today''s OHLC. All-time extremes come from the whole daily history when p_full (after history was written into the past) or when a coin has none yet, else the stored ones are extended by the last 24 hours. Returns the number of coins written. Called through market.refresh_coin_state, which also evaluates alarms.';
revoke execute on function market.write_coin_state(timestamptz, boolean) from public;

-- why: every price source (the simulated tick, CSV import, any later source) refreshes through
-- this one function, so evaluating alarms here, in the refresh's own transaction, is the single
-- hook that sees every new price and commits or rolls back with it. plpgsql, not SQL, because an
-- SQL body is checked at creation and app.evaluate_alarms is defined in a later file. The time of
-- each part is returned (clock_timestamp, which moves within the transaction), so that the minute
-- tick can report the alarms apart from the coin state without splitting the transaction.
create or replace function market.refresh_coin_state_timed(
  p_now timestamptz default now(), p_full boolean default false,
  out coins int, out coin_state_ms double precision, out alarms_ms double precision)
language plpgsql volatile
as $$
declare
  v_started timestamptz := clock_timestamp();
  v_written timestamptz;
  v_evaluated timestamptz;
begin
  coins := market.write_coin_state(p_now, p_full);
  v_written := clock_timestamp();
  perform app.evaluate_alarms();
  v_evaluated := clock_timestamp();
  perform app.bump_data_version('market');
  coin_state_ms := extract(epoch from (v_written - v_started) + (clock_timestamp() - v_evaluated)) * 1000;
  alarms_ms := extract(epoch from v_evaluated - v_written) * 1000;
end;
$$;
comment on function market.refresh_coin_state_timed(timestamptz, boolean) is 'Recomputes market.coin_state as of p_now (market.write_coin_state: see there), then evaluates alarms (app.evaluate_alarms) in the same transaction and bumps the market data version. Returns the number of coins written and the milliseconds of each part: coin_state_ms (the coin state and the version bump), alarms_ms (the alarms'' evaluation). market.refresh_coin_state is the same without the times.';
revoke execute on function market.refresh_coin_state_timed(timestamptz, boolean) from public;

create or replace function market.refresh_coin_state(p_now timestamptz default now(), p_full boolean default false) returns int
language sql volatile
as $$
  select coins from market.refresh_coin_state_timed(p_now, p_full);
$$;
comment on function market.refresh_coin_state(timestamptz, boolean) is 'Recomputes market.coin_state as of p_now (market.write_coin_state: see there) and then evaluates alarms (app.evaluate_alarms) in the same transaction: market.refresh_coin_state_timed without the times. Returns the number of coins written.';
revoke execute on function market.refresh_coin_state(timestamptz, boolean) from public;
