-- The market-wide technical tally: 25 indicator categories over the coins ranked 1-100, each with
-- a state, a score (-100..+100) and its data. Eighteen categories count per-coin states (the
-- thirteen of the coin snapshot api.coin_indicators, and sma-200, golden-cross, breadth-24h,
-- breadth-7d and highs-lows); seven read the market readings (Fear & Greed components, the Fear &
-- Greed, Bull/Bear and altseason readings). Rebuilt after the sentiment refresh, every 15 minutes.

-- why: every category turns its score into a state by the same thresholds
create or replace function market.tally_state(p_score int) returns text
language sql immutable parallel safe
as $$ select case when p_score >= 20 then 'bullish' when p_score <= -20 then 'bearish' else 'neutral' end $$;
comment on function market.tally_state(int) is 'State of a tally category from its score: bullish at +20 or more, bearish at -20 or less, else neutral.';

-- why: one coin's states in the eighteen counting categories, computed one coin per statement
create or replace function market.coin_tally_states(p_coin_id int, p_now timestamptz default now())
returns table (coin_id int, category text, state text, value double precision)
language sql stable
as $$
  with coins as (
    select s.coin_id, c.slug, s.change_24h, s.change_7d
    from market.coin_state s join market.coins c on c.id = s.coin_id
    where s.coin_id = p_coin_id and s.price is not null
  ),
  recent as (
    -- the latest 200 daily closes, newest first: SMA 50 / 200 and the 30-day range at the latest bar
    select k.coin_id,
      max(b.close) filter (where b.n = 1) as close,
      case when count(*) filter (where b.n <= 50) = 50 then avg(b.close) filter (where b.n <= 50) end as sma50,
      case when count(*) = 200 then avg(b.close) end as sma200,
      case when count(*) filter (where b.n <= 30) = 30 then max(b.close) filter (where b.n <= 30) end as high30,
      case when count(*) filter (where b.n <= 30) = 30 then min(b.close) filter (where b.n <= 30) end as low30
    from coins k
    cross join lateral (
      select x.close, row_number() over (order by x.i desc) as n
      from market.indicator_bars(k.coin_id) x
      where x.date <= (p_now at time zone 'UTC')::date
      order by x.i desc limit 200
    ) b
    group by k.coin_id
  )
  select k.coin_id, i.indicator, i.state,
    coalesce(i.data->>'value', i.data->>'k')::double precision
  from coins k cross join lateral api.coin_indicators(k.slug) i
  union all
  select r.coin_id, 'sma-200', market.indicator_direction(r.close - r.sma200), (r.close / nullif(r.sma200, 0) * 100 - 100)::double precision from recent r
  union all
  select r.coin_id, 'golden-cross', market.indicator_direction(r.sma50 - r.sma200), (r.sma50 / nullif(r.sma200, 0) * 100 - 100)::double precision from recent r
  union all
  select k.coin_id, 'breadth-24h', market.indicator_direction(k.change_24h::numeric), k.change_24h from coins k
  union all
  select k.coin_id, 'breadth-7d', market.indicator_direction(k.change_7d::numeric), k.change_7d from coins k
  union all
  select r.coin_id, 'highs-lows',
    case when r.high30 = r.low30 then 'neutral' when r.close >= r.high30 then 'bullish' when r.close <= r.low30 then 'bearish' else 'neutral' end,
    (r.close / nullif(r.high30, 0) * 100 - 100)::double precision from recent r
$$;
comment on function market.coin_tally_states(int, timestamptz) is 'The coin''s state per counting category of the tally and the value behind it: the thirteen snapshot indicators of api.coin_indicators (value: the reading, %K for stoch-rsi), sma-200 (close vs SMA 200; value: percent above), golden-cross (SMA 50 vs SMA 200; value: percent apart), breadth-24h and breadth-7d (sign of the change; value: the change), highs-lows (close at its 30-day closing high bullish, at its low bearish; value: percent below the high). Warm-up readings are neutral with a null value.';

-- why: the job refreshes the per-coin states one coin per statement (see the table's comment)
create or replace function market.refresh_tally_coin(p_coin_id int, p_now timestamptz default now()) returns int
language plpgsql volatile
as $$
declare
  v_rows int;
begin
  delete from market.tally_coin_states t where t.coin_id = p_coin_id;
  insert into market.tally_coin_states (coin_id, category, state, value, computed_at)
  select s.coin_id, s.category, s.state, s.value, p_now from market.coin_tally_states(p_coin_id, p_now) s;
  get diagnostics v_rows = row_count;
  return v_rows;
end;
$$;
comment on function market.refresh_tally_coin(int, timestamptz) is 'Rewrites the stored tally states (market.tally_coin_states) of one coin. Returns the number of categories written (18, or none for a coin without a price).';

-- why: the tally endpoint's categories, in their documented order
create or replace function market.indicator_tally(p_now timestamptz default now())
returns table (ord int, category text, state text, score int, data json)
language sql stable
as $$
  with states as (
    select t.coin_id, t.category, t.state, t.value
    from market.tally_coin_states t join market.coin_state s on s.coin_id = t.coin_id and s.rank <= 100
  ),
  order_of (ord, category) as (
    values (1, 'rsi'), (2, 'stoch-rsi'), (3, 'mfi'), (4, 'williams-r'), (5, 'cci'), (6, 'macd'), (7, 'sma'),
      (8, 'vwap'), (9, 'obv'), (10, 'cmf'), (11, 'adx'), (12, 'price-volatility'), (13, 'volume-volatility'),
      (14, 'sma-200'), (15, 'golden-cross'), (16, 'breadth-24h'), (17, 'breadth-7d'), (18, 'highs-lows')
  ),
  counted as (
    select o.ord, o.category,
      round(100.0 * coalesce(sum(market.indicator_score(s.state)), 0) / greatest(count(s.coin_id), 1))::int as score,
      json_build_object(
        'coins', count(s.coin_id),
        'bullish', count(*) filter (where s.state = 'bullish'),
        'bearish', count(*) filter (where s.state = 'bearish'),
        'neutral', count(*) filter (where s.state = 'neutral'),
        'overbought', count(*) filter (where s.state = 'overbought'),
        'oversold', count(*) filter (where s.state = 'oversold'),
        'median', percentile_cont(0.5) within group (order by s.value)) as data
    from order_of o left join states s on s.category = o.category
    group by o.ord, o.category
  ),
  fear_greed as (
    select f.reading from market.sentiment_snapshots f where f.kind = 'fear_greed' and f.coin_id is null
  ),
  components (ord, category, score) as (
    select 19, 'market-momentum', (f.reading->'intervals'->'7d'->'breakdown'->>'momentum')::int from fear_greed f
    union all select 20, 'market-volatility', (f.reading->'intervals'->'7d'->'breakdown'->>'volatility')::int from fear_greed f
    union all select 21, 'market-volume', (f.reading->'intervals'->'7d'->'breakdown'->>'volume')::int from fear_greed f
    union all select 22, 'btc-dominance', (f.reading->'intervals'->'7d'->'breakdown'->>'dominance')::int from fear_greed f
  ),
  readings as (
    select 23 as ord, 'fear-greed' as category, (f.reading->>'score')::int as score,
      case f.reading->>'regime' when 'extreme fear' then 'oversold' when 'fear' then 'bearish'
        when 'greed' then 'bullish' when 'extreme greed' then 'overbought' else 'neutral' end as state,
      json_build_object('score', (f.reading->>'score')::int, 'index', (f.reading->>'index')::int, 'regime', f.reading->>'regime') as data
    from fear_greed f
    union all
    select 24, 'bull-bear', (b.reading->>'score')::int,
      case b.reading->>'regime' when 'bull' then 'bullish' when 'bear' then 'bearish' else 'neutral' end,
      json_build_object('bull', (b.reading->>'bull')::int, 'bear', (b.reading->>'bear')::int, 'regime', b.reading->>'regime')
    from market.sentiment_snapshots b where b.kind = 'bull_bear' and b.coin_id is null
    union all
    select * from (
      select 25, 'altseason', 2 * a.index - 100,
        case market.altseason_season(a.index) when 'altcoin season' then 'bullish' when 'bitcoin season' then 'bearish' else 'neutral' end,
        json_build_object('index', a.index, 'season', market.altseason_season(a.index), 'date', market.iso_date(a.day))
      from market.altseason_days a order by a.day desc limit 1) latest
  )
  select c.ord, c.category, market.tally_state(c.score), c.score, c.data from counted c
  union all
  select c.ord, c.category, market.tally_state(c.score), c.score, json_build_object('value', c.score, 'window_days', 7) from components c
  union all
  select r.ord, r.category, r.state, r.score, r.data from readings r
  order by 1
$$;
comment on function market.indicator_tally(timestamptz) is
'The 25 categories of the market-wide tally, in order. 1-18 count the stored per-coin states (market.tally_coin_states, see market.coin_tally_states) of the coins ranked 1-100: score = round(100 * (bullish + oversold - bearish - overbought) / coins), data {coins, bullish, bearish, neutral, overbought, oversold, median (of the values)}. '
'19-22 are the 7-day Fear & Greed components of the market (market-momentum, market-volatility, market-volume, btc-dominance), score = the component. The state of 1-22 is bullish at a score of +20 or more, bearish at -20 or less, else neutral. '
'23 fear-greed (score; extreme fear oversold, fear bearish, greed bullish, extreme greed overbought), 24 bull-bear (score; bull bullish, bear bearish), 25 altseason (score = 2 * index - 100; altcoin season bullish, bitcoin season bearish). A reading not yet computed leaves its category out.';

create or replace function market.refresh_indicator_tally(p_now timestamptz default now(), p_coins boolean default true) returns int
language plpgsql volatile
as $$
declare
  v_categories json;
  v_count int;
begin
  if p_coins then
    perform market.refresh_tally_coin(s.coin_id, p_now) from market.coin_state s where s.rank <= 100;
  end if;
  delete from market.tally_coin_states t
  where not exists (select from market.coin_state s where s.coin_id = t.coin_id and s.rank <= 100);
  select json_agg(json_build_object('category', t.category, 'state', t.state, 'score', t.score, 'data', t.data) order by t.ord), count(*)
    into v_categories, v_count
  from market.indicator_tally(p_now) t;
  delete from market.sentiment_snapshots where kind = 'indicator_tally';
  insert into market.sentiment_snapshots (kind, coin_id, reading, computed_at)
  select 'indicator_tally', null,
    json_build_object(
      'categories', v_categories,
      'summary', (
        select json_build_object(
          'score', round(avg((c->>'score')::int))::int,
          'state', market.tally_state(round(avg((c->>'score')::int))::int),
          'bullish', count(*) filter (where c->>'state' in ('bullish', 'oversold')),
          'bearish', count(*) filter (where c->>'state' in ('bearish', 'overbought')),
          'neutral', count(*) filter (where c->>'state' = 'neutral'))
        from json_array_elements(v_categories) c),
      'coins', (select count(*) from market.coin_state s where s.rank <= 100),
      'updated_at', market.iso_time(p_now)),
    p_now;
  perform app.bump_data_version('indicators');
  return v_count;
end;
$$;
comment on function market.refresh_indicator_tally(timestamptz, boolean) is 'With p_coins, first rewrites the per-coin states of every coin ranked 1-100 (the refresh_sentiment task does that coin by coin and passes false); then rebuilds the stored market-wide tally (market.sentiment_snapshots, kind indicator_tally) from market.indicator_tally: {categories [{category, state, score, data}], summary {score (mean of the category scores), state, bullish, bearish, neutral (category counts; oversold counts as bullish, overbought as bearish)}, coins, updated_at}. Run by the refresh_sentiment task after market.refresh_sentiment(). Returns the number of categories.';

create or replace function api.market_indicator_tally() returns json
language sql stable
as $$ select market.sentiment_snapshot('indicator_tally', null) $$;
comment on function api.market_indicator_tally() is 'The market-wide technical tally (15-minute snapshot): 25 categories over the coins ranked 1-100, each {category, state, score -100..+100, data}, with a summary. Definitions: market.indicator_tally, docs/sentiment.md. Endpoint: GET /api/v1/sentiment/indicators (Pro).';
