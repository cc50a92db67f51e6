-- The multi-indicator snapshot: per indicator category, the reading of the coin's latest daily bar
-- (today's, still moving until the day closes), a state, a score and the raw data. The rules:
--   rsi (14)              > 70 overbought (-1), < 30 oversold (+1), else neutral (0)
--   stoch-rsi (14)        k > 80 overbought (-1), k < 20 oversold (+1), else k above d bullish (+1),
--                         below bearish (-1), equal neutral (0)
--   mfi (14)              > 80 overbought (-1), < 20 oversold (+1), else neutral
--   williams-r (14)       > -20 overbought (-1), < -80 oversold (+1), else neutral
--   cci (20)              > +100 bullish (+1), < -100 bearish (-1), else neutral
--   macd (12/26/9)        histogram > 0 bullish, < 0 bearish, 0 neutral
--   sma (50)              close above the SMA bullish, below bearish, equal neutral
--   vwap (20)             close above the VWAP bullish, below bearish, equal neutral
--   obv (window 21)       OBV above its value 21 days earlier bullish, below bearish, equal neutral
--   cmf (20)              > +0.05 bullish, < -0.05 bearish, else neutral
--   adx (14)              ADX below 25 neutral (no trend); else +DI above -DI bullish, below bearish
--   price-volatility (7), volume-volatility (7): not directional, always neutral (0)
-- An indicator still in its warm-up (null reading) is neutral with score 0.
-- Price-scale readings (sma, vwap, macd, obv, close) are decimal strings in `data`, the rest numbers.

-- why: a state and its score from a signed comparison (bullish above, bearish below)
create or replace function market.indicator_direction(p_sign numeric) returns text
language sql immutable parallel safe
as $$ select case when p_sign > 0 then 'bullish' when p_sign < 0 then 'bearish' else 'neutral' end $$;
comment on function market.indicator_direction(numeric) is 'bullish for a positive sign, bearish for a negative one, neutral for 0 or null.';

-- why: overbought/oversold oscillators share one rule
create or replace function market.indicator_band(p_value double precision, p_oversold double precision, p_overbought double precision)
returns text
language sql immutable parallel safe
as $$ select case when p_value > p_overbought then 'overbought' when p_value < p_oversold then 'oversold' else 'neutral' end $$;
comment on function market.indicator_band(double precision, double precision, double precision) is 'overbought above the upper band, oversold below the lower band, neutral otherwise (and for null).';

-- why: one score per state, the same for every indicator
create or replace function market.indicator_score(p_state text) returns int
language sql immutable parallel safe
as $$ select case p_state when 'bullish' then 1 when 'oversold' then 1 when 'bearish' then -1 when 'overbought' then -1 else 0 end $$;
comment on function market.indicator_score(text) is 'Score of a snapshot state: bullish and oversold +1, bearish and overbought -1, neutral 0.';

create or replace function api.coin_indicators(p_slug text)
returns table (indicator text, state text, score int, data jsonb, date date)
language plpgsql stable
as $$
declare
  v_coin int := market.coin_id(p_slug);
  v_last int;
  v_date date;
  v_close numeric;
begin
  select b.i, b.date, b.close into v_last, v_date, v_close
  from market.indicator_bars(v_coin) b order by b.i desc limit 1;
  if v_last is null then
    raise exception 'No indicator data for this coin yet.' using errcode = 'MD404';
  end if;
  return query
  with
    rsi as (select s.value from market.rsi_series(v_coin, 14) s where s.i = v_last),
    stoch as (select s.k, s.d from market.stoch_rsi_series(v_coin, 14) s where s.i = v_last),
    mfi as (select s.value from market.mfi_series(v_coin, 14) s where s.i = v_last),
    willr as (select s.value from market.williams_r_series(v_coin, 14) s where s.i = v_last),
    cci as (select s.value from market.cci_series(v_coin, 20) s where s.i = v_last),
    macd as (select s.macd, s.signal, s.histogram from market.macd_series(v_coin) s where s.i = v_last),
    sma as (select s.value from market.sma_series(v_coin, 50) s where s.i = v_last),
    vwap as (select s.value from market.vwap_series(v_coin, 20) s where s.i = v_last),
    obv as (
      select s.value, s.value - lag(s.value) over (order by s.i) as change
      from market.obv_series(v_coin) s where s.i in (v_last - 21, v_last)
      order by s.i desc limit 1
    ),
    cmf as (select s.value from market.cmf_series(v_coin, 20) s where s.i = v_last),
    adx as (select s.adx, s.plus_di, s.minus_di from market.adx_series(v_coin, 14) s where s.i = v_last),
    pvol as (select s.value from market.log_change_volatility_series(v_coin, 7, 'price') s where s.i = v_last),
    vvol as (select s.value from market.log_change_volatility_series(v_coin, 7, 'volume') s where s.i = v_last),
    readings (position, indicator, state, data) as (
      select 1, 'rsi', market.indicator_band(rsi.value, 30, 70), jsonb_build_object('value', rsi.value, 'period', 14) from rsi
      union all
      select 2, 'stoch-rsi',
        case when stoch.k > 80 then 'overbought' when stoch.k < 20 then 'oversold'
             else market.indicator_direction((stoch.k - stoch.d)::numeric) end,
        jsonb_build_object('k', stoch.k, 'd', stoch.d, 'period', 14) from stoch
      union all
      select 3, 'mfi', market.indicator_band(mfi.value, 20, 80), jsonb_build_object('value', mfi.value, 'period', 14) from mfi
      union all
      select 4, 'williams-r', market.indicator_band(willr.value, -80, -20), jsonb_build_object('value', willr.value, 'period', 14) from willr
      union all
      select 5, 'cci', case when cci.value > 100 then 'bullish' when cci.value < -100 then 'bearish' else 'neutral' end,
        jsonb_build_object('value', cci.value, 'period', 20) from cci
      union all
      select 6, 'macd', market.indicator_direction(macd.histogram),
        jsonb_build_object('value', macd.macd::text, 'signal', macd.signal::text, 'histogram', macd.histogram::text) from macd
      union all
      select 7, 'sma', market.indicator_direction(v_close - sma.value),
        jsonb_build_object('value', sma.value::text, 'close', v_close::text, 'period', 50) from sma
      union all
      select 8, 'vwap', market.indicator_direction(v_close - vwap.value),
        jsonb_build_object('value', vwap.value::text, 'close', v_close::text, 'period', 20) from vwap
      union all
      select 9, 'obv', market.indicator_direction(obv.change),
        jsonb_build_object('value', obv.value::text, 'change', obv.change::text, 'window', 21) from obv
      union all
      select 10, 'cmf', case when cmf.value > 0.05 then 'bullish' when cmf.value < -0.05 then 'bearish' else 'neutral' end,
        jsonb_build_object('value', cmf.value, 'period', 20) from cmf
      union all
      select 11, 'adx', case when adx.adx >= 25 then market.indicator_direction((adx.plus_di - adx.minus_di)::numeric) else 'neutral' end,
        jsonb_build_object('value', adx.adx, 'plus_di', adx.plus_di, 'minus_di', adx.minus_di, 'period', 14) from adx
      union all
      select 12, 'price-volatility', 'neutral', jsonb_build_object('value', pvol.value, 'period', 7) from pvol
      union all
      select 13, 'volume-volatility', 'neutral', jsonb_build_object('value', vvol.value, 'period', 7) from vvol
    )
  select r.indicator, r.state, market.indicator_score(r.state), r.data, v_date
  from readings r
  order by r.position;
end;
$$;
comment on function api.coin_indicators(text) is 'Multi-indicator snapshot of the coin with this slug at its latest daily bar (today''s, provisional until the day closes): one row per indicator (rsi, stoch-rsi, mfi, williams-r, cci, macd, sma, vwap, obv, cmf, adx, price-volatility, volume-volatility) with state (bullish, bearish, neutral, overbought, oversold), score (+1 bullish or oversold, -1 bearish or overbought, 0 neutral), the raw reading in data (price-scale values as decimal strings) and the date. Rules in docs/indicators.md; an indicator still in warm-up is neutral. Unknown slug, or a coin without daily bars: MD404. Endpoint: GET /api/v1/coins/{slug}/indicators.';
