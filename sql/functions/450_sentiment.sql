-- Sentiment from the project's own data: Fear & Greed and Bull/Bear (snapshots per scope: the
-- market and each ranked coin) and the daily altseason index. Everything reads the daily
-- aggregate market.coin_bars_1d (today's live bucket included) of the coins ranked in the top 100
-- now. The formulas are in docs/sentiment.md; market.refresh_sentiment() writes the readings.

-- why: the five display bands of the spec, in one place
create or replace function market.fear_greed_band(p_index int) returns text
language sql immutable parallel safe
as $$
  select case
    when p_index is null then null
    when p_index < 20 then 'extreme fear'
    when p_index < 40 then 'fear'
    when p_index < 60 then 'neutral'
    when p_index < 80 then 'greed'
    else 'extreme greed'
  end
$$;
comment on function market.fear_greed_band(int) is 'Band of a Fear & Greed index (0-100): 0-19 extreme fear, 20-39 fear, 40-59 neutral, 60-79 greed, 80-100 extreme greed. Null stays null.';

-- why: the display index is a fixed rescaling of the composite score, defined once
create or replace function market.fear_greed_index(p_score numeric) returns int
language sql immutable parallel safe
as $$ select round((least(greatest(p_score, -100), 100) + 100) / 2)::int $$;
comment on function market.fear_greed_index(numeric) is 'Display index 0-100 of a composite score -100..+100: round((score + 100) / 2), half away from zero; the score is clamped to its range first.';

-- why: every component maps an unbounded statistic onto -100..+100 the same way
create or replace function market.sentiment_squash(p_value double precision) returns int
language sql immutable parallel safe
as $$ select round(100 * tanh(p_value))::int $$;
comment on function market.sentiment_squash(double precision) is 'round(100 * tanh(x)): a component''s statistic mapped onto -100..+100 (x = 1 gives 76, x = 2 gives 96). Null stays null.';

-- why: the daily series every sentiment reading starts from, read once
create or replace function market.sentiment_bars(p_now timestamptz, p_days int)
returns table (coin_id int, day date, close numeric, marketcap numeric, volume numeric, r double precision, prev_marketcap numeric)
language plpgsql stable
as $$
begin
  return query
  select b.coin_id, (b.time at time zone 'UTC')::date, b.close, b.marketcap, b.volume,
    case when b.close > 0 and lag(b.close) over w > 0 then ln((b.close / lag(b.close) over w)::double precision) end,
    case when lag(b.time) over w = b.time - interval '1 day' then lag(b.marketcap) over w end
  from market.coin_bars_1d b
  join market.coin_state s on s.coin_id = b.coin_id and s.rank <= 100
  where b.time >= date_trunc('day', p_now, 'UTC') - make_interval(days => p_days) and b.time <= p_now
  window w as (partition by b.coin_id order by b.time);
end;
$$;
comment on function market.sentiment_bars(timestamptz, int) is 'Daily bars (close, marketcap, USD volume) of the coins ranked 1-100 now, over the p_days UTC days before p_now''s day and that day, with r = ln(close / previous close) (null on the first day or a zero price) and prev_marketcap, the marketcap of the day before (null when that day has no bar).';

-- why: the five components of Fear & Greed for every scope and window in one set-based pass
create or replace function market.fear_greed_components(p_now timestamptz default now())
returns table (coin_id int, window_days int, volatility int, momentum int, volume int, dominance int, breadth int)
language plpgsql stable
as $$
#variable_conflict use_column
declare
  v_today date := (p_now at time zone 'UTC')::date;
begin
  return query
  with bars as (
    select * from market.sentiment_bars(p_now, 4 * 90)
  ),
  totals as (
    select b.day, sum(b.marketcap) as marketcap from bars b group by b.day
  ),
  -- a chain-linked market index: each day's return over the coins present on both days
  market_days as (
    select b.day,
      ln((sum(b.marketcap) filter (where b.prev_marketcap > 0 and b.marketcap > 0)
        / nullif(sum(b.prev_marketcap) filter (where b.prev_marketcap > 0 and b.marketcap > 0), 0))::double precision) as r,
      sum(b.volume) as volume,
      (sum(b.marketcap) filter (where c.slug = 'bitcoin') * 100 / nullif(sum(b.marketcap), 0))::double precision as share
    from bars b
    join market.coins c on c.id = b.coin_id
    group by b.day
  ),
  series as (
    select 0 as scope, m.day, m.r, m.volume, m.share from market_days m
    union all
    select b.coin_id, b.day, b.r, b.volume, (b.marketcap * 100 / nullif(t.marketcap, 0))::double precision
    from bars b join totals t on t.day = b.day
  ),
  windows (days) as (values (7), (30), (90)),
  stats as (
    select s.scope, w.days,
      sum(s.r) filter (where s.day > v_today - w.days) as log_change,
      stddev_samp(s.r) filter (where s.day > v_today - w.days) as vol_short,
      stddev_samp(s.r) filter (where s.day > v_today - 4 * w.days) as vol_long,
      avg(s.volume) filter (where s.day >= v_today - w.days and s.day < v_today) as volume_short,
      avg(s.volume) filter (where s.day >= v_today - 4 * w.days and s.day < v_today) as volume_long,
      (array_agg(s.share order by s.day desc) filter (where s.share is not null))[1] as share_now,
      (array_agg(s.share order by s.day desc) filter (where s.share is not null and s.day <= v_today - w.days))[1] as share_then,
      count(*) filter (where s.day > v_today - w.days and s.r > 0) as up_days,
      count(*) filter (where s.day > v_today - w.days and s.r is not null) as return_days
    from series s cross join windows w
    group by s.scope, w.days
  ),
  market_breadth as (
    select st.days, count(*) filter (where st.log_change > 0) as up, count(st.log_change) as n
    from stats st where st.scope <> 0 group by st.days
  )
  select nullif(st.scope, 0), st.days,
    case when st.vol_short > 0 and st.vol_long > 0 then -market.sentiment_squash(2 * ln(st.vol_short / st.vol_long)) end,
    market.sentiment_squash(20 * st.log_change / sqrt(st.days)),
    case when st.volume_short > 0 and st.volume_long > 0 and st.log_change is not null then
      (sign(st.log_change) * market.sentiment_squash(2 * ln((st.volume_short / st.volume_long)::double precision)))::int end,
    case when st.scope = 0 then -market.sentiment_squash((st.share_now - st.share_then) / 2)
         when st.share_then > 0 then market.sentiment_squash(10 * (st.share_now / st.share_then - 1)) end,
    case when st.scope = 0 then (select round(200.0 * mb.up / mb.n - 100)::int from market_breadth mb where mb.days = st.days and mb.n > 0)
         when st.return_days > 0 then round(200.0 * st.up_days / st.return_days - 100)::int end
  from stats st;
end;
$$;
comment on function market.fear_greed_components(timestamptz) is
'The Fear & Greed components (integers -100..+100, null when the data does not allow one) per scope (coin_id null: the market; else a coin ranked 1-100) and look-back window W of 7, 30 and 90 days, as of p_now. '
'With r the daily log returns (the market''s chain-linked over the top-100 marketcap) and squash(x) = round(100 tanh x): '
'volatility = -squash(2 ln(stddev r over W / stddev r over 4W)); momentum = squash(20 * sum r over W / sqrt W); '
'volume = sign(momentum) * squash(2 ln(mean daily volume of the W complete days before today / mean of the 4W days)); '
'dominance = market: -squash(change of bitcoin''s share of the top-100 marketcap over W, in points, / 2), coin: squash(10 * relative change of its share); '
'breadth = market: 200 * coins up over W / coins - 100, coin: 200 * up days / days - 100. See docs/sentiment.md.';

-- why: one reading's JSON, the same for the main reading and each interval
create or replace function market.fear_greed_json(p_score int, p_breakdown json) returns json
language sql immutable parallel safe
as $$
  select json_build_object(
    'score', p_score,
    'index', market.fear_greed_index(p_score),
    'regime', market.fear_greed_band(market.fear_greed_index(p_score)),
    'breakdown', p_breakdown,
    'score_normalized', p_score)
$$;
comment on function market.fear_greed_json(int, json) is 'A Fear & Greed interval as the API writes it: score (-100..+100), index (0-100), regime (its band), breakdown (the components) and score_normalized (the score, kept for clients of the reference contract).';

-- why: the readings of every scope, as the endpoint returns them, computed in one statement
create or replace function market.fear_greed_readings(p_now timestamptz default now())
returns table (coin_id int, reading json)
language sql stable
as $$
  with scored as (
    select c.coin_id, c.window_days,
      round((select avg(v) from unnest(array[c.volatility, c.momentum, c.volume, c.dominance, c.breadth]) v))::int as score,
      json_build_object('volatility', c.volatility, 'momentum', c.momentum, 'volume', c.volume,
        'dominance', c.dominance, 'breadth', c.breadth) as breakdown
    from market.fear_greed_components(p_now) c
  ),
  main as (
    select s.coin_id, s.score from scored s where s.window_days = 7 and s.score is not null
  )
  select m.coin_id,
    json_build_object(
      'scope', coalesce((select k.slug from market.coins k where k.id = m.coin_id), 'market'),
      'score', m.score,
      'index', market.fear_greed_index(m.score),
      'regime', market.fear_greed_band(market.fear_greed_index(m.score)),
      'intervals', (
        select json_object_agg(s.window_days || 'd', market.fear_greed_json(s.score, s.breakdown) order by s.window_days)
        from scored s where s.coin_id is not distinct from m.coin_id and s.score is not null),
      'updated_at', market.iso_time(p_now))
  from main m
$$;
comment on function market.fear_greed_readings(timestamptz) is 'The Fear & Greed reading of the market (coin_id null) and of each coin ranked 1-100 as of p_now: score = the mean of the available 7-day components, rounded; index = market.fear_greed_index(score); regime = its band; intervals 7d, 30d and 90d with their own score, index, regime and breakdown. A scope without any component has no reading.';

-- why: Bull/Bear needs one documented rule that works for the market and for a coin
create or replace function market.bull_bear_readings(p_now timestamptz default now())
returns table (coin_id int, reading json)
language sql stable
as $$
  with bars as (
    select * from market.sentiment_bars(p_now, 21)
  ),
  today as (
    -- each coin's newest bar: today's, or yesterday's in the first minutes of a UTC day, before
    -- the new day has a bar (else a fresh database had no reading then)
    select distinct on (b.coin_id) b.coin_id, b.day, b.close, b.marketcap from bars b
    where b.day >= (p_now at time zone 'UTC')::date - 1
    order by b.coin_id, b.day desc
  ),
  coins as (
    -- share of the 20 complete days before that bar's day whose close is below its close (ties count half)
    select t.coin_id, t.marketcap,
      100.0 * (count(*) filter (where b.close < t.close) + 0.5 * count(*) filter (where b.close = t.close)) / count(*) as bull
    from today t
    join bars b on b.coin_id = t.coin_id and b.day < t.day and b.day >= t.day - 20
    group by t.coin_id, t.marketcap, t.close
  ),
  scopes as (
    select c.coin_id, c.bull, null::int as coins from coins c
    union all
    select null, sum(c.bull * c.marketcap) / nullif(sum(c.marketcap), 0), count(c.marketcap)::int
    from coins c having sum(c.marketcap) > 0
  )
  select s.coin_id,
    json_build_object(
      'scope', coalesce((select k.slug from market.coins k where k.id = s.coin_id), 'market'),
      'bull', round(s.bull)::int,
      'bear', 100 - round(s.bull)::int,
      'score', 2 * round(s.bull)::int - 100,
      'regime', case when round(s.bull) >= 60 then 'bull' when round(s.bull) <= 40 then 'bear' else 'neutral' end,
      'window_days', 20,
      'coins', s.coins,
      'updated_at', market.iso_time(p_now))
  from scopes s
$$;
comment on function market.bull_bear_readings(timestamptz) is
'The Bull/Bear reading of each coin ranked 1-100 and of the market (coin_id null) as of p_now. A coin''s bull share is the percentage of its 20 complete daily closes before today that lie below today''s price (ties count half; before the new UTC day has its first bar, yesterday''s close against the 20 days before it); '
'the market''s is the marketcap-weighted mean of the coins'' (coins = how many). bull and bear (100 - bull) are percentages, score = bull - bear (-100..+100), regime bull at 60 or more, bear at 40 or less, else neutral.';

-- why: altseason has full daily history: one set-based computation for any range of days
create or replace function market.altseason_compute(p_from date, p_to date, p_look_back int default 90)
returns table (day date, index int, outperformers int, coins int)
language plpgsql stable
as $$
#variable_conflict use_column
begin
  -- window functions instead of self-joins: the planner cannot estimate the aggregate's rows,
  -- and a nested loop over them grows with the square of the days
  return query
  with d as (
    select b.coin_id, c.slug, (b.time at time zone 'UTC')::date as day, b.close, b.marketcap,
      first_value(b.close) over (partition by b.coin_id order by b.time
        range between make_interval(days => p_look_back) preceding and make_interval(days => p_look_back) preceding) as close_then
    from market.coin_bars_1d b
    join market.coins c on c.id = b.coin_id
    where b.time >= (p_from - p_look_back)::timestamp at time zone 'UTC' and b.time < (p_to + 1)::timestamp at time zone 'UTC'
  ),
  changes as (
    select d.day, d.coin_id, d.marketcap, d.close / nullif(d.close_then, 0) as ratio,
      d.slug = 'bitcoin' as is_bitcoin,
      d.slug = 'bitcoin' or d.marketcap is null or (d.close between 0.95 and 1.05 and d.close_then between 0.95 and 1.05) as excluded
    from d
    where d.day between p_from and p_to and d.close_then is not null
  ),
  ranked as (
    select ch.day, ch.ratio, ch.excluded,
      max(ch.ratio) filter (where ch.is_bitcoin) over (partition by ch.day) as btc_ratio,
      row_number() over (partition by ch.day, ch.excluded order by ch.marketcap desc, ch.coin_id) as place
    from changes ch
  )
  select r.day, round(100.0 * count(*) filter (where r.ratio > r.btc_ratio) / count(*))::int,
    (count(*) filter (where r.ratio > r.btc_ratio))::int, count(*)::int
  from ranked r
  where not r.excluded and r.place <= 100 and r.btc_ratio is not null and r.ratio is not null
  group by r.day
  order by r.day;
end;
$$;
comment on function market.altseason_compute(date, date, int) is 'Altseason per UTC day in [p_from, p_to]: of the top-100 coins by that day''s marketcap, bitcoin and USD-pegged coins (close within 0.95-1.05 on both days) excluded, the number whose close rose more than bitcoin''s over p_look_back days (outperformers), the number compared (coins) and index = round(100 * outperformers / coins). Days without a bitcoin close then and now have no row.';

-- why: the altseason season names, in one place
create or replace function market.altseason_season(p_index int) returns text
language sql immutable parallel safe
as $$ select case when p_index is null then null when p_index >= 75 then 'altcoin season' when p_index <= 25 then 'bitcoin season' else 'neutral' end $$;
comment on function market.altseason_season(int) is 'altcoin season at an altseason index of 75 or more, bitcoin season at 25 or less, else neutral.';

-- why: the 15-minute refresh: snapshots replaced, altseason days added or brought up to date
create or replace function market.refresh_sentiment(p_now timestamptz default now()) returns json
language plpgsql volatile
as $$
declare
  v_today date := (p_now at time zone 'UTC')::date;
  v_from date;
  v_fear_greed int;
  v_bull_bear int;
  v_altseason int;
begin
  delete from market.sentiment_snapshots where kind in ('fear_greed', 'bull_bear');
  insert into market.sentiment_snapshots (kind, coin_id, reading, computed_at)
  select 'fear_greed', r.coin_id, r.reading, p_now from market.fear_greed_readings(p_now) r;
  get diagnostics v_fear_greed = row_count;
  insert into market.sentiment_snapshots (kind, coin_id, reading, computed_at)
  select 'bull_bear', r.coin_id, r.reading, p_now from market.bull_bear_readings(p_now) r;
  get diagnostics v_bull_bear = row_count;

  -- from the day before the last stored one (it may have been today's provisional row); the
  -- first run starts at the first day with a 90-day look-back
  select max(a.day) - 1 into v_from from market.altseason_days a;
  if v_from is null then
    select (min(b.time) at time zone 'UTC')::date + 90 into v_from from market.coin_bars_1d b;
  end if;
  insert into market.altseason_days as a (day, index, outperformers, coins, look_back_days, computed_at)
  select c.day, c.index, c.outperformers, c.coins, 90, p_now from market.altseason_compute(v_from, v_today, 90) c
  on conflict (day) do update set index = excluded.index, outperformers = excluded.outperformers,
    coins = excluded.coins, look_back_days = excluded.look_back_days, computed_at = excluded.computed_at;
  get diagnostics v_altseason = row_count;
  perform app.bump_data_version('sentiment');
  return json_build_object('fear_greed', v_fear_greed, 'bull_bear', v_bull_bear, 'altseason_days', v_altseason);
end;
$$;
comment on function market.refresh_sentiment(timestamptz) is 'Rewrites the Fear & Greed and Bull/Bear snapshots (market and coins ranked 1-100) and brings market.altseason_days up to p_now''s day (the first run backfills every day the daily history allows). Run every 15 minutes by the refresh_sentiment task. Returns the row counts.';
