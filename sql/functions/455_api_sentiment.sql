-- The Sentiment group's readers: the stored snapshots (Fear & Greed, Bull/Bear) per scope and the
-- altseason index with its daily history. The computations are in 450_sentiment.sql.

-- why: a snapshot per scope, with the API's 404 when the scope has no reading
create or replace function market.sentiment_snapshot(p_kind text, p_coin text) returns json
language plpgsql stable
as $$
declare
  v_coin int;
  v_reading json;
begin
  if p_coin is not null then
    v_coin := market.coin_id(p_coin);
  end if;
  select s.reading into v_reading from market.sentiment_snapshots s
  where s.kind = p_kind and s.coin_id is not distinct from v_coin;
  if v_reading is null then
    raise exception 'No % data for this scope.',
      case p_kind when 'fear_greed' then 'fear & greed' when 'bull_bear' then 'bull/bear' else 'indicator tally' end
      using errcode = 'MD404';
  end if;
  return v_reading;
end;
$$;
comment on function market.sentiment_snapshot(text, text) is 'The stored reading of kind p_kind for the coin with slug p_coin (null: the market). MD404 for an unknown slug or a scope without a reading (coins ranked 1-100 have one).';

create or replace function api.fear_greed(p_coin text default null) returns json
language sql stable
as $$ select market.sentiment_snapshot('fear_greed', p_coin) $$;
comment on function api.fear_greed(text) is 'The current Fear & Greed reading (a 15-minute snapshot, no history) of the market (p_coin null) or of a coin (its slug): {scope, score -100..+100, index 0-100, regime (band of index: extreme fear, fear, neutral, greed, extreme greed), intervals {7d, 30d, 90d: {score, index, regime, breakdown {volatility, momentum, volume, dominance, breadth}, score_normalized}}, updated_at}. The main reading is the 7d interval. Formulas: market.fear_greed_components, docs/sentiment.md. Endpoint: GET /api/v1/sentiment/fear-greed.';

create or replace function api.bull_bear(p_coin text default null) returns json
language sql stable
as $$ select market.sentiment_snapshot('bull_bear', p_coin) $$;
comment on function api.bull_bear(text) is 'The current Bull/Bear reading (a 15-minute snapshot, no history) of the market (p_coin null) or of a coin: {scope, bull, bear (percent, summing to 100), score = bull - bear, regime (bull, bear, neutral), window_days, coins, updated_at}. Rule: market.bull_bear_readings. Endpoint: GET /api/v1/sentiment/bull-bear.';

-- why: the altseason endpoint: the latest day, with its daily history on request
create or replace function api.altseason(p_days int default 0) returns json
language plpgsql stable
as $$
declare
  v_result json;
begin
  if p_days is null or p_days < 0 or p_days > 365 then
    raise exception 'days must be from 0 to 365.' using errcode = 'MD422';
  end if;
  select json_build_object(
      'index', a.index,
      'season', market.altseason_season(a.index),
      'outperformers', a.outperformers,
      'coins', a.coins,
      'look_back_days', a.look_back_days,
      'date', market.iso_date(a.day),
      'updated_at', market.iso_time(a.computed_at),
      'history', (
        select coalesce(json_agg(json_build_object(
            'date', market.iso_date(h.day), 'index', h.index, 'season', market.altseason_season(h.index),
            'outperformers', h.outperformers, 'coins', h.coins) order by h.day), '[]')
        from market.altseason_days h
        where h.day > a.day - p_days))
    into v_result
  from market.altseason_days a
  order by a.day desc
  limit 1;
  if v_result is null then
    raise exception 'No altseason data yet.' using errcode = 'MD404';
  end if;
  return v_result;
end;
$$;
comment on function api.altseason(int) is 'The altseason index of the latest day (today''s, provisional until the day closes): {index 0-100, season (altcoin season at 75+, bitcoin season at 25-, else neutral), outperformers, coins, look_back_days, date, updated_at, history}; history holds the p_days (0-365) most recent days up to that one, oldest first ([] for 0). Definition: market.altseason_compute. Endpoint: GET /api/v1/sentiment/altseason.';
