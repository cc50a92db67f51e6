-- The current figures of every coin, computed set-based from the bars and written to
-- market.coin_state in one statement: each minute only for the coins whose bars or windows moved.

-- why: one rounding of a percent change for the full and the incremental computation alike
create or replace function market.percent_change(p_price numeric, p_reference numeric) returns double precision
language sql immutable
as $$
  select round(((p_price / nullif(p_reference, 0) - 1) * 100)::numeric, 4)::double precision;
$$;
comment on function market.percent_change(numeric, numeric) is 'Percent change of p_price against p_reference, rounded to 4 decimals; null without a (non-zero) reference.';

-- why: the coin state's per-coin figures from the bars, for every coin or the few computed again
create or replace function market.computed_coin_figures(p_now timestamptz, p_full boolean, p_coins int[])
returns setof market.coin_figures
language sql stable
set search_path = market, public, pg_temp
as $$
  with latest as (
    -- the newest bar at or before p_now: raw if the coin has raw bars, else the daily aggregate
    select c.id as coin_id, coalesce(r.time, d.time) as time, coalesce(r.close, d.close) as price, r.time is not null as raw
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
    where p_coins is null or c.id in (select unnest(p_coins))
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
    -- each coin's own bars of the last 24 hours, in index order: no sort of the whole window
    select l.coin_id, w.*
    from latest l
    cross join lateral (
      select sum(b.volume) as volume_24h,
        max(b.high) as high_24h,
        last(b.time, b.high) as high_24h_at,
        min(b.low) as low_24h,
        first(b.time, b.low) as low_24h_at,
        first(b.open, b.time) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_open,
        max(b.high) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_high,
        min(b.low) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_low,
        last(b.close, b.time) filter (where b.time >= date_trunc('day', p_now, 'UTC')) as today_close
      from market.coin_bars_1m b
      where b.coin_id = l.coin_id and b.time > p_now - interval '24 hours' and b.time <= p_now
    ) w
    where l.raw
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
    select l.coin_id,
      coalesce(h.ath, s.ath) as ath, coalesce(h.ath_at, s.ath_at) as ath_at,
      coalesce(lo.atl, s.atl) as atl, coalesce(lo.atl_at, s.atl_at) as atl_at
    from latest l
    left join market.coin_state s on s.coin_id = l.coin_id and l.coin_id not in (select coin_id from rescan)
    left join highs h on h.coin_id = l.coin_id
    left join lows lo on lo.coin_id = l.coin_id
  ),
  figures as (
    select l.coin_id, l.price, l.time as last_updated,
      coalesce(rc.volume_24h, 0) as volume_24h,
      market.percent_change(l.price, rf.close_24h) as change_24h,
      market.percent_change(l.price, rf.close_7d) as change_7d,
      case when rc.high_24h > x.ath or x.ath is null then rc.high_24h else x.ath end as ath,
      case when rc.high_24h > x.ath or x.ath is null then rc.high_24h_at else x.ath_at end as ath_at,
      case when rc.low_24h < x.atl or x.atl is null then rc.low_24h else x.atl end as atl,
      case when rc.low_24h < x.atl or x.atl is null then rc.low_24h_at else x.atl_at end as atl_at,
      rc.today_open, rc.today_high, rc.today_low, rc.today_close, rf.close_24h, rf.close_7d
    from latest l
    left join reference rf on rf.coin_id = l.coin_id
    left join recent rc on rc.coin_id = l.coin_id
    left join extremes x on x.coin_id = l.coin_id
  )
  select f.coin_id, f.price, f.last_updated, f.volume_24h, f.change_24h, f.change_7d,
    -- a daily aggregate not yet refreshed must not hide a higher high (lower low) of the current price
    greatest(f.ath, f.price), case when f.ath is null or f.price > f.ath then f.last_updated else f.ath_at end,
    least(f.atl, f.price), case when f.atl is null or f.price < f.atl then f.last_updated else f.atl_at end,
    f.today_open, f.today_high, f.today_low, f.today_close, f.close_24h, f.close_7d
  from figures f;
$$;
comment on function market.computed_coin_figures(timestamptz, boolean, int[]) is 'The figures of market.coin_state computed from the bars as of p_now for the coins p_coins (null: every coin): price, last_updated, 24h volume, 24h/7d changes, all-time high/low (from the whole daily history when p_full or when the coin has none stored, else the stored ones extended by the last 24 hours), today''s OHLC, and the 24h/7d reference closes. Marketcap, ranks and dominance are market.write_coin_state''s.';
revoke execute on function market.computed_coin_figures(timestamptz, boolean, int[]) from public;

-- why: a coin whose stored bars did not change only needs its new bars and what its windows lost
create or replace function market.moved_coin_figures(p_now timestamptz, p_through timestamptz, p_coins int[])
returns setof market.coin_figures
language sql stable
set search_path = market, public, pg_temp
as $$
  -- Set-based: the bars of the last minutes are read for all the coins at once (one index scan per
  -- chunk for the array of coins), not by a lookup per coin into the hypertable (issue 46).
  with
  gained as (
    -- the new bars: every bar after the stored price (write_coin_state chose coins whose bars there
    -- are all new); those after p_through - 1 minute for every coin at once (a coin that traded
    -- in the minute before the last refresh has its price from then: one index entry each)
    select b.coin_id, b.time, b.open, b.high, b.low, b.close, b.volume
    from market.coin_bars_1m b
    join market.coin_state s on s.coin_id = b.coin_id
    where b.coin_id = any (p_coins) and b.time > p_through - interval '1 minute' and b.time <= p_now
      and b.time > s.last_updated
    union all
    -- and, for a coin whose stored price is older, its earlier new bars one coin at a time (late
    -- bars, noted as changes like every new bar)
    select b.coin_id, b.time, b.open, b.high, b.low, b.close, b.volume
    from unnest(p_coins) k (id)
    join market.coin_state s on s.coin_id = k.id
    cross join lateral (
      select * from market.coin_bars_1m b
      where s.last_updated < p_through - interval '1 minute' and b.coin_id = s.coin_id
        and b.time > s.last_updated and b.time <= p_through - interval '1 minute'
    ) b
    where k.id in (select c.coin_id from market.coin_state_changes c where c.time <= p_through - interval '1 minute')
  ),
  new_bars as (
    -- in time order, as before (a tie of highs or lows goes to the earliest bar)
    select g.coin_id, sum(g.volume) as volume, max(g.high) as high, last(g.time, g.high) as high_at,
      min(g.low) as low, first(g.time, g.low) as low_at,
      first(g.open, g.time) as open, last(g.close, g.time) as close, max(g.time) as time,
      -- today's figures take only today's bars: a late bar of the day before (a fill just after midnight) is not today's
      first(g.open, g.time) filter (where g.time >= date_trunc('day', p_now, 'UTC')) as today_open,
      max(g.high) filter (where g.time >= date_trunc('day', p_now, 'UTC')) as today_high,
      min(g.low) filter (where g.time >= date_trunc('day', p_now, 'UTC')) as today_low,
      last(g.close, g.time) filter (where g.time >= date_trunc('day', p_now, 'UTC')) as today_close
    from (select * from gained order by coin_id, time) g
    group by g.coin_id
  ),
  left_24h as (
    -- the bars of (p_through - 24h, p_now - 24h] leave the last 24 hours
    select b.coin_id, sum(b.volume) as volume, last(b.close, b.time) as close
    from market.coin_bars_1m b
    where b.coin_id = any (p_coins) and b.time > p_through - interval '24 hours' and b.time <= p_now - interval '24 hours'
    group by b.coin_id
  ),
  passed_7d as (
    select b.coin_id, last(b.close, b.time) as close
    from market.coin_bars_1m b
    where b.coin_id = any (p_coins) and b.time > p_through - interval '7 days' and b.time <= p_now - interval '7 days'
    group by b.coin_id
  ),
  moved as (
    select s.coin_id, s.ath as stored_ath, s.ath_at as stored_ath_at, s.atl as stored_atl, s.atl_at as stored_atl_at,
      s.today_open as stored_open, s.today_high as stored_high, s.today_low as stored_low, s.today_close as stored_close,
      coalesce(n.close, s.price) as price, coalesce(n.time, s.last_updated) as last_updated,
      -- a bar that passed 24 hours (7 days) is the newest that old: the new reference close
      coalesce(o.close, s.close_24h) as close_24h, coalesce(w.close, s.close_7d) as close_7d,
      -- the last 24 hours gained the new bars and lost those of (p_through - 24h, p_now - 24h]
      s.volume_24h + coalesce(n.volume, 0) - coalesce(o.volume, 0) as volume_24h,
      n.high, n.high_at, n.low, n.low_at, n.today_open, n.today_high, n.today_low, n.today_close
    from unnest(p_coins) k (id)
    join market.coin_state s on s.coin_id = k.id
    left join new_bars n on n.coin_id = s.coin_id
    left join left_24h o on o.coin_id = s.coin_id
    left join passed_7d w on w.coin_id = s.coin_id
  ),
  figures as (
    -- the stored extremes cover the bars up to p_through
    select m.*,
      case when m.high > m.stored_ath or m.stored_ath is null then m.high else m.stored_ath end as ath,
      case when m.high > m.stored_ath or m.stored_ath is null then m.high_at else m.stored_ath_at end as ath_at,
      case when m.low < m.stored_atl or m.stored_atl is null then m.low else m.stored_atl end as atl,
      case when m.low < m.stored_atl or m.stored_atl is null then m.low_at else m.stored_atl_at end as atl_at
    from moved m
  )
  select f.coin_id, f.price, f.last_updated, f.volume_24h,
    market.percent_change(f.price, f.close_24h), market.percent_change(f.price, f.close_7d),
    greatest(f.ath, f.price), case when f.ath is null or f.price > f.ath then f.last_updated else f.ath_at end,
    least(f.atl, f.price), case when f.atl is null or f.price < f.atl then f.last_updated else f.atl_at end,
    -- the same UTC day as p_through (else everything is computed): today's bars so far are stored
    coalesce(f.stored_open, f.today_open), greatest(f.stored_high, f.today_high), least(f.stored_low, f.today_low), coalesce(f.today_close, f.stored_close),
    f.close_24h, f.close_7d
  from figures f;
$$;
comment on function market.moved_coin_figures(timestamptz, timestamptz, int[]) is 'The figures of market.coin_state as of p_now for the coins p_coins, from their stored row as of p_through (the same UTC day) and only the bars that changed them since: the new bars (those after the stored price, each within 24 hours of p_now) give the price, extend the extremes and add to the 24h volume, and those of p_now''s UTC day extend today''s OHLC; the bars of (p_through - 24h, p_now - 24h] leave it, and the newest of them (of (p_through - 7d, p_now - 7d]) is the new 24h (7d) reference close, else the stored one stays. The bars of the last minutes (after p_through - 1 minute) are read for all the coins at once, earlier new bars coin by coin for the coins with a change that old noted in market.coin_state_changes. Valid only for coins with raw bars none of which changed otherwise and whose new bars are all noted there: market.write_coin_state chooses them.';
revoke execute on function market.moved_coin_figures(timestamptz, timestamptz, int[]) from public;

-- why: list endpoints read one indexed row per coin instead of aggregating bars per request; a
-- minute's refresh computes again only the coins whose bars or windows moved (issue 46)
create or replace function market.write_coin_state(p_now timestamptz default now(), p_full boolean default false, p_incremental boolean default true) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
-- the planner's estimates of these statements are far off, and JIT compiling them took longer than running them
set jit = off
set work_mem = '64MB'
as $$
declare
  v_last market.coin_state_through;
  v_old_chunks text;
  v_read tid[];
  v_changed int[];
  v_added int[];
  v_computed int[];
  v_moved int[] := '{}';
  v_count int;
begin
  -- refreshes take turns: each reads what the last one left
  perform pg_advisory_xact_lock(hashtext('market.write_coin_state'));
  select * into v_last from market.coin_state_through;
  select string_agg(c::text, ',' order by c::text) into v_old_chunks
  from public.show_chunks('market.coin_bars_1m', older_than => p_now - interval '7 days') c;

  -- The bar changes up to p_now (later ones wait for their minute). A coin whose changes are all
  -- new bars after its stored price (and within 24 hours) adds them to its stored figures; any
  -- other change has its coin computed again from its bars.
  with changes as (
    select c.ctid, c.coin_id,
      coalesce(c.inserted and s.last_updated > p_now - interval '7 days'
        and c.time > greatest(s.last_updated, p_now - interval '24 hours'), false) as addable
    from market.coin_state_changes c
    left join market.coin_state s on s.coin_id = c.coin_id
    where c.time <= p_now
  ),
  coins as (select g.coin_id, bool_and(g.addable) as addable from changes g group by g.coin_id)
  select array(select g.ctid from changes g),
    array(select k.coin_id from coins k where not k.addable),
    array(select k.coin_id from coins k where k.addable)
  into v_read, v_changed, v_added;

  if p_full or not p_incremental or v_last.through is null or p_now < v_last.through
    -- a new day (today's figures restart) or retention dropping old bars changes every coin
    or date_trunc('day', p_now, 'UTC') <> date_trunc('day', v_last.through, 'UTC')
    or v_old_chunks is distinct from v_last.old_chunks then
    v_computed := null;
  else
    -- coins whose windows moved past a bar of theirs: a bar left the last 24 hours (volume, 24h
    -- reference close) or passed 7 days (7d reference close)
    select v_added || coalesce(array_agg(s.coin_id), '{}') into v_moved
    from market.coin_state s
    where s.last_updated is not null
      and s.coin_id not in (select unnest(v_added || v_changed))
      and (exists (select from market.coin_bars_1m b where b.coin_id = s.coin_id
                   and b.time > v_last.through - interval '24 hours' and b.time <= p_now - interval '24 hours')
        or exists (select from market.coin_bars_1m b where b.coin_id = s.coin_id
                   and b.time > v_last.through - interval '7 days' and b.time <= p_now - interval '7 days'));
    -- computed from their bars: other changes, new coins, coins without raw bars of the last week
    select coalesce(array_agg(c.id), '{}') into v_computed
    from market.coins c
    left join market.coin_state s on s.coin_id = c.id
    where s.coin_id is null
      or c.id in (select unnest(v_changed))
      or (c.id in (select unnest(v_moved)) and (s.last_updated is null or s.last_updated <= p_now - interval '7 days'));
    v_moved := array(select unnest(v_moved) except select unnest(v_computed));
  end if;

  with fresh as (
    -- one-time filters: a function with no coin to compute is not called (planning it costs tens of ms)
    select * from market.computed_coin_figures(p_now, p_full, v_computed) where v_computed is null or cardinality(v_computed) > 0
    union all
    select * from market.moved_coin_figures(p_now, v_last.through, v_moved) where cardinality(v_moved) > 0
  ),
  kept as (
    select s.coin_id, s.price, s.last_updated, s.volume_24h, s.change_24h, s.change_7d, s.ath, s.ath_at, s.atl, s.atl_at,
      s.today_open, s.today_high, s.today_low, s.today_close, s.close_24h, s.close_7d
    from market.coin_state s
    where v_computed is not null and s.coin_id not in (select f.coin_id from fresh f)
  ),
  figures as (
    -- marketcap, valuation and rank follow the catalogue's supplies and status for every coin
    select x.*, c.status = 'active' and x.price is not null as ranked,
      round(x.price * c.circulating_supply, 2) as marketcap,
      round(x.price * coalesce(c.max_supply, c.total_supply), 2) as fully_diluted_valuation
    from (select * from fresh union all select * from kept) x
    join market.coins c on c.id = x.coin_id
  ),
  -- window functions over the ranked coins (partition true), no join between the steps
  ranks as (
    select f.*,
      case when f.ranked then row_number() over (partition by f.ranked order by f.marketcap desc nulls last, f.volume_24h desc, f.coin_id)::int end as rank,
      case when f.ranked then f.marketcap * 100 / nullif(sum(f.marketcap) over (partition by f.ranked), 0) end as dominance
    from figures f
  ),
  state as (
    select r.coin_id, r.price, r.volume_24h, r.change_24h, r.change_7d, r.marketcap, r.fully_diluted_valuation,
      round(r.dominance, 6)::double precision as dominance, r.rank,
      case when r.ranked then row_number() over (partition by r.ranked order by r.change_24h desc nulls last, r.rank)::int end as change_rank_24h,
      case when r.ranked then row_number() over (partition by r.ranked order by r.change_7d desc nulls last, r.rank)::int end as change_rank_7d,
      r.ath, r.ath_at, r.atl, r.atl_at, r.today_open, r.today_high, r.today_low, r.today_close, r.last_updated,
      r.close_24h, r.close_7d
    from ranks r
  ),
  updated as (
    -- a row whose figures did not move is left alone
    update market.coin_state s set
      price = x.price, volume_24h = x.volume_24h, change_24h = x.change_24h, change_7d = x.change_7d,
      marketcap = x.marketcap, fully_diluted_valuation = x.fully_diluted_valuation, dominance = x.dominance,
      rank = x.rank, change_rank_24h = x.change_rank_24h, change_rank_7d = x.change_rank_7d,
      ath = x.ath, ath_at = x.ath_at, atl = x.atl, atl_at = x.atl_at, today_open = x.today_open,
      today_high = x.today_high, today_low = x.today_low, today_close = x.today_close,
      last_updated = x.last_updated, close_24h = x.close_24h, close_7d = x.close_7d, refreshed_at = now()
    from state x
    where s.coin_id = x.coin_id
      and (s.price, s.volume_24h, s.change_24h, s.change_7d, s.marketcap, s.fully_diluted_valuation, s.dominance,
        s.rank, s.change_rank_24h, s.change_rank_7d, s.ath, s.ath_at, s.atl, s.atl_at,
        s.today_open, s.today_high, s.today_low, s.today_close, s.last_updated, s.close_24h, s.close_7d)
      is distinct from (x.price, x.volume_24h, x.change_24h, x.change_7d, x.marketcap, x.fully_diluted_valuation,
        x.dominance, x.rank, x.change_rank_24h, x.change_rank_7d, x.ath, x.ath_at, x.atl, x.atl_at,
        x.today_open, x.today_high, x.today_low, x.today_close, x.last_updated, x.close_24h, x.close_7d)
  ),
  -- the changes read, and every change of a coin computed from its bars in this statement's snapshot
  read as (
    delete from market.coin_state_changes c
    where c.ctid = any (v_read) and v_computed is not null and c.coin_id not in (select unnest(v_computed))
  ),
  consumed as (
    delete from market.coin_state_changes c
    where c.time <= p_now and (v_computed is null or c.coin_id in (select unnest(v_computed)))
  )
  insert into market.coin_state (
    coin_id, price, volume_24h, change_24h, change_7d, marketcap, fully_diluted_valuation, dominance,
    rank, change_rank_24h, change_rank_7d, ath, ath_at, atl, atl_at,
    today_open, today_high, today_low, today_close, last_updated, close_24h, close_7d, refreshed_at)
  select x.coin_id, x.price, x.volume_24h, x.change_24h, x.change_7d, x.marketcap, x.fully_diluted_valuation, x.dominance,
    x.rank, x.change_rank_24h, x.change_rank_7d, x.ath, x.ath_at, x.atl, x.atl_at,
    x.today_open, x.today_high, x.today_low, x.today_close, x.last_updated, x.close_24h, x.close_7d, now()
  from state x
  where x.coin_id not in (select s.coin_id from market.coin_state s)
  on conflict (coin_id) do nothing;

  select count(*)::int into v_count from (
    select 1 from market.coins where v_computed is null
    union all select 1 from unnest(v_computed) union all select 1 from unnest(v_moved)) counted;

  -- an instant before the last one: changes read since may lie past it, so the next refresh computes everything
  if v_last.through is not null and p_now < v_last.through then
    delete from market.coin_state_through;
  else
    insert into market.coin_state_through (through, old_chunks) values (p_now, v_old_chunks)
    on conflict (singleton) do update set through = excluded.through, old_chunks = excluded.old_chunks;
  end if;
  return v_count;
end;
$$;
comment on function market.write_coin_state(timestamptz, boolean, boolean) is 'Brings market.coin_state up to p_now (default now()): price, 24h volume, 24h/7d changes and their ranks, marketcap, fully diluted valuation, rank, dominance, all-time high/low, today''s OHLC. Incremental (p_incremental, the default) after a refresh of the same UTC day: only coins with a bar changed (market.coin_state_changes) or whose 24h/7d windows passed a bar are computed again, those with only newer bars from their stored row and the bars gained and lost (market.moved_coin_figures), the others from their bars (market.computed_coin_figures); marketcap, valuation, ranks and dominance are computed for every coin. Everything is computed again on the first refresh, on a new UTC day, after retention dropped bars, for an instant before the last one, with p_full or without p_incremental; the result is the same either way. All-time extremes come from the whole daily history when p_full (after history was written into the past) or when a coin has none yet, else the stored ones are extended. Rows whose figures did not change are not written. Returns the number of coins computed. Called through market.refresh_coin_state, which also evaluates alarms.';
revoke execute on function market.write_coin_state(timestamptz, boolean, boolean) from public;

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
  -- one refresh at a time: the minute job and the stream holders' finished minutes (market.finish_stream_minutes) both refresh
  perform pg_advisory_xact_lock(hashtext('market.refresh_coin_state'));
  -- before the coin state consumes the bar changes: bars built again are compared with the alarms again
  perform app.rewind_alarm_watermarks(p_now);
  coins := market.write_coin_state(p_now, p_full);
  v_written := clock_timestamp();
  perform app.evaluate_alarms();
  v_evaluated := clock_timestamp();
  perform app.bump_data_version('market');
  coin_state_ms := extract(epoch from (v_written - v_started) + (clock_timestamp() - v_evaluated)) * 1000;
  alarms_ms := extract(epoch from v_evaluated - v_written) * 1000;
end;
$$;
comment on function market.refresh_coin_state_timed(timestamptz, boolean) is 'Recomputes market.coin_state as of p_now (market.write_coin_state: see there), then evaluates alarms (app.evaluate_alarms, after app.rewind_alarm_watermarks for bars built again) in the same transaction and bumps the market data version, one refresh at a time (an advisory lock: the minute job and the stream holders, market.finish_stream_minutes, both call it). Returns the number of coins written and the milliseconds of each part: coin_state_ms (the coin state and the version bump), alarms_ms (the alarms'' evaluation). market.refresh_coin_state is the same without the times.';
revoke execute on function market.refresh_coin_state_timed(timestamptz, boolean) from public;

create or replace function market.refresh_coin_state(p_now timestamptz default now(), p_full boolean default false) returns int
language sql volatile
as $$
  select coins from market.refresh_coin_state_timed(p_now, p_full);
$$;
comment on function market.refresh_coin_state(timestamptz, boolean) is 'Recomputes market.coin_state as of p_now (market.write_coin_state: see there) and then evaluates alarms (app.evaluate_alarms) in the same transaction: market.refresh_coin_state_timed without the times. Returns the number of coins written.';
revoke execute on function market.refresh_coin_state(timestamptz, boolean) from public;
