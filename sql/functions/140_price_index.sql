-- The price index: each coin's 1-minute bar built from the venues' 1-minute candles
-- (market.venue_bars_1m). The bar then flows on like any other: aggregates, coin state, alarms.

-- why: one set of rules for which venue markets make a coin's price, shared by the minute index
-- (market.build_index_bars) and the live index (market.refresh_live_prices)
create or replace function market.apply_index_rules(p_max_deviation numeric, p_min_volume_usd numeric) returns void
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
begin
  update index_components set reason = 'no_rate' where rate is null or rate <= 0;
  -- Thin markets are left out only when the coin trades on a market above the threshold.
  update index_components x set reason = 'low_volume'
  where x.reason is null and x.market_volume_usd < p_min_volume_usd
    and exists (select from index_components o
      where o.coin_id = x.coin_id and o.time = x.time and o.reason is null and o.market_volume_usd >= p_min_volume_usd);

  drop table if exists index_medians;
  create temporary table index_medians on commit drop as
  select x.coin_id, x.time, count(*) as n,
    percentile_cont(0.5) within group (order by x.close_usd::double precision)::numeric as median
  from index_components x where x.reason is null
  group by x.coin_id, x.time;

  update index_components x set reason = 'outlier'
  from index_medians m
  where m.coin_id = x.coin_id and m.time = x.time and x.reason is null
    and m.n >= 3 and abs(x.close_usd / nullif(m.median, 0) - 1) > p_max_deviation;

end;
$$;
comment on function market.apply_index_rules(numeric, numeric) is
'The price index''s rules, applied to the caller''s temporary table index_components (coin_id, time, rate, market_volume_usd, close_usd, reason): a component without a USD rate is left out (reason no_rate); one whose market''s 24h USD volume is under p_min_volume_usd is left out when another market of the coin and time reaches it (low_volume); with three or more left, one further than p_max_deviation from their median USD price is left out (outlier). Leaves the medians in the temporary table index_medians (coin_id, time, n, median). Used by market.build_index_bars (minutes) and market.refresh_live_prices (live).';
revoke execute on function market.apply_index_rules(numeric, numeric) from public;

-- why: one definition of which market stands for a coin on a venue, shared by the minute index
-- (its candles are read for these markets only, market.venue_candle_markets) and the live index
create or replace function market.index_markets(p_exchange_ids int[] default null)
returns table (exchange_id int, coin_id int, quote text, symbol text, candles_until timestamptz)
language sql stable
as $$
  (select distinct on (m.exchange_id, m.base_coin_id) m.exchange_id, m.base_coin_id, m.quote, m.symbol, m.candles_until
  from market.venue_markets m
  left join market.pair_keys k on k.base_coin_id = m.base_coin_id and k.quote_symbol = m.quote
  left join market.tickers t on t.exchange_id = m.exchange_id and t.pair_id = k.id and t.instrument = 'spot'
  where (p_exchange_ids is null or m.exchange_id = any (p_exchange_ids))
    and m.active and m.instrument = 'spot' and m.base_coin_id is not null
  order by m.exchange_id, m.base_coin_id, t.volume_usd desc nulls last, m.symbol)
  union all
  -- the demo market's venues list no markets: their spot tickers are what they trade
  (select distinct on (t.exchange_id, t.base_coin_id) t.exchange_id, t.base_coin_id, t.quote_symbol, t.exchange_symbol, null::timestamptz
  from market.tickers t
  join market.exchanges e on e.id = t.exchange_id and e.source = 'simulated-exchanges'
  where (p_exchange_ids is null or t.exchange_id = any (p_exchange_ids)) and t.instrument = 'spot'
  order by t.exchange_id, t.base_coin_id, t.volume_usd desc, t.quote_symbol)
$$;
comment on function market.index_markets(int[]) is 'The one spot market per coin and venue (of p_exchange_ids, null: all) that feeds the price index, minute and live alike: the coin''s most traded listed market there (24h USD volume of its ticker; by symbol before any ticker), with how far its 1-minute candles are stored; the simulated venues, which list no markets, by their spot tickers alike.';

-- why: one documented method, set-based over a window, re-run whenever late candles arrive
create or replace function market.build_index_bars(
  p_from timestamptz,
  p_to timestamptz,
  p_coins int[] default null,
  p_max_deviation numeric default 0.05,
  p_min_volume_usd numeric default 10000
) returns table (bars int, coins int, excluded int)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
begin
  -- why a table: analysed, the joins below are hashed; as a CTE its row estimate led the planner
  -- into nested loops that compare every candle with every quote minute
  create temporary table index_candles on commit drop as
    select b.*, m.quote_coin_id,
      case when b.quote = 'USD' then 1::numeric
        when m.quote_coin_id is null then 1 / nullif(fx.rate, 0) end as fiat_usd,
      t.volume_usd as market_volume_usd
    from market.venue_bars_1m b
    left join lateral (
      select vm.quote_coin_id from market.venue_markets vm
      where vm.exchange_id = b.exchange_id and vm.base_coin_id = b.coin_id and vm.quote = b.quote and vm.instrument = 'spot'
      order by vm.active desc limit 1
    ) m on true
    left join market.fx_latest fx on fx.currency = b.quote
    left join market.pair_keys k on k.base_coin_id = b.coin_id and k.quote_symbol = b.quote
    left join market.tickers t on t.pair_id = k.id and t.exchange_id = b.exchange_id and t.instrument = 'spot'
    where b.time >= p_from and b.time < p_to
      -- the coins asked for, and the coins they are quoted in (whose own candles price those quotes)
      and (p_coins is null or b.coin_id = any (p_coins) or b.coin_id in (
        select vm.quote_coin_id from market.venue_markets vm where vm.base_coin_id = any (p_coins) and vm.quote_coin_id is not null));
  analyze index_candles;

  create temporary table index_components on commit drop as
  with candles as (select * from index_candles),
  -- Quote coins (USDT, USDC, BTC …) are priced first from their own USD and fiat markets of the
  -- same minute: the median close, robust to one bad venue; else their current price.
  direct as (
    select c.coin_id, c.time, percentile_cont(0.5) within group (order by (c.close * c.fiat_usd)::double precision) as usd
    from candles c
    where c.fiat_usd is not null and c.coin_id in (select quote_coin_id from candles where quote_coin_id is not null)
    group by c.coin_id, c.time
  )
  select x.time, x.coin_id, x.exchange_id, x.quote, x.market_volume_usd, x.rate,
    x.open * x.rate as open_usd, x.high * x.rate as high_usd, x.low * x.rate as low_usd, x.close * x.rate as close_usd,
    x.volume * x.close * x.rate as volume_usd, null::text as reason
  from (
    select c.*,
      -- else the quote coin's own index bar of that minute, else (live minutes only: history must not
      -- take today's BTC price) its current price, else a stablecoin's peg
      coalesce(c.fiat_usd, d.usd::numeric, qb.close,
        case when c.time > now() - interval '1 hour' then market.usd_rate(c.quote, c.quote_coin_id) else market.peg_usd_rate(c.quote_coin_id) end) as rate
    from candles c
    left join direct d on d.coin_id = c.quote_coin_id and d.time = c.time
    left join market.coin_bars_1m qb on qb.coin_id = c.quote_coin_id and qb.time = c.time and qb.time >= p_from and qb.time < p_to
  ) x;

  perform market.apply_index_rules(p_max_deviation, p_min_volume_usd);

  -- the window is recomputed whole: its earlier verdicts give way to this one
  delete from market.price_index_exclusions e
  where e.time >= p_from and e.time < p_to and (e.coin_id, e.time) in (select coin_id, time from index_components)
    and (p_coins is null or e.coin_id = any (p_coins));
  insert into market.price_index_exclusions (time, coin_id, exchange_id, quote, price_usd, median_usd, reason)
  select x.time, x.coin_id, x.exchange_id, x.quote, market.round_significant(x.close_usd, 10),
    market.round_significant(m.median, 10), x.reason
  from index_components x
  left join index_medians m on m.coin_id = x.coin_id and m.time = x.time
  where x.reason is not null and (p_coins is null or x.coin_id = any (p_coins));
  get diagnostics excluded = row_count;

  with bar as (
    select x.coin_id, x.time,
      -- volume-weighted across the venues; a minute without any volume takes the plain mean
      coalesce(sum(x.open_usd * x.volume_usd) / nullif(sum(x.volume_usd), 0), avg(x.open_usd)) as open,
      max(x.high_usd) as high,
      min(x.low_usd) as low,
      coalesce(sum(x.close_usd * x.volume_usd) / nullif(sum(x.volume_usd), 0), avg(x.close_usd)) as close,
      sum(x.volume_usd) as volume
    from index_components x
    where x.reason is null and (p_coins is null or x.coin_id = any (p_coins))
    group by x.coin_id, x.time
  ),
  rounded as (
    -- rounding may not push open or close outside the traded range
    select b.coin_id, b.time, r.high, r.low,
      least(r.high, greatest(r.low, market.round_significant(b.open, 10))) as open,
      least(r.high, greatest(r.low, market.round_significant(b.close, 10))) as close,
      round(b.volume, 2) as volume
    from bar b
    cross join lateral (select market.round_significant(b.high, 10) as high, market.round_significant(b.low, 10) as low) r
  ),
  written as (
    insert into market.coin_bars_1m as b (time, coin_id, open, high, low, close, volume, marketcap)
    select r.time, r.coin_id, r.open, r.high, r.low, r.close, r.volume, round(r.close * c.circulating_supply, 2)
    from rounded r
    join market.coins c on c.id = r.coin_id
    on conflict on constraint coin_bars_1m_pkey do update set
      open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close,
      volume = excluded.volume, marketcap = excluded.marketcap
    where (b.open, b.high, b.low, b.close, b.volume, b.marketcap)
      is distinct from (excluded.open, excluded.high, excluded.low, excluded.close, excluded.volume, excluded.marketcap)
    returning b.coin_id
  )
  select count(*)::int, count(distinct w.coin_id)::int into bars, coins from written w;

  -- Bars older than the aggregates' refresh policies reach are refreshed by the caller
  -- (src/sources/aggregates.ts); the window is recorded with the bars, so a crash loses nothing.
  if bars > 0 and p_from < now() - interval '6 days' then
    perform app.begin_coin_bar_backfill('exchanges', p_from, p_to);
  end if;
  drop table index_candles, index_components, index_medians;
  return next;
end;
$$;
comment on function market.build_index_bars(timestamptz, timestamptz, int[], numeric, numeric) is
'The price index: (re)builds the 1-minute bars (market.coin_bars_1m, USD) of every coin (or of p_coins) with venue candles in [p_from, p_to) from market.venue_bars_1m. Per coin and minute: '
'1. each venue market''s candle is converted to USD: USD quotes at 1, fiat quotes through market.fx_latest, coin quotes (stablecoins, BTC, ETH …) at the quote coin''s own USD price of that minute (the median close of its USD and fiat markets), else its index bar of that minute, else (within the last hour) its current price in market.coin_state, else a stablecoin''s peg; a quote with no rate is left out (no_rate). '
'2. markets whose 24h USD volume (market.tickers) is under p_min_volume_usd (default 10 000) are left out, unless no market of the coin reaches it (low_volume). '
'3. with three or more markets left, a market whose USD close is further than p_max_deviation (default 5 %) from their median is left out (outlier). '
'4. open and close are the USD-volume-weighted means of the markets left (the plain mean when the minute had no volume), high the highest high and low the lowest low actually traded, volume the sum of USD volumes; prices keep 10 significant digits. '
'A minute without any candle gets no bar. Markets left out are recorded in market.price_index_exclusions with the reason. Returns bars written or changed, coins, and markets left out.';
revoke execute on function market.build_index_bars(timestamptz, timestamptz, int[], numeric, numeric) from public;

-- why: one definition of what a stablecoin is worth before the market has priced it
create or replace function market.peg_usd_rate(p_coin_id int) returns numeric
language sql stable
as $$
  select case c.peg when 'USD' then 1::numeric else 1 / nullif(fx.rate, 0) end
  from market.coins c
  left join market.fx_latest fx on fx.currency = c.peg
  where c.id = p_coin_id and c.peg is not null
$$;
comment on function market.peg_usd_rate(int) is 'The USD value of a stablecoin at its peg (1 for USD, 1 / the fiat rate otherwise); null for a coin without a peg.';

-- why: one definition of a quote currency's USD rate now, for tickers, liquidations and the live index
create or replace function market.usd_rate(p_quote text, p_quote_coin_id int) returns numeric
language sql stable
as $$
  select case
    when p_quote = 'USD' then 1::numeric
    when p_quote_coin_id is null then (select 1 / nullif(fx.rate, 0) from market.fx_latest fx where fx.currency = p_quote)
    else coalesce((select s.price from market.coin_state s where s.coin_id = p_quote_coin_id), market.peg_usd_rate(p_quote_coin_id))
  end
$$;
comment on function market.usd_rate(text, int) is 'The current USD value of one unit of a quote currency: USD 1, a fiat currency through market.fx_latest, a coin at its current price (market.coin_state), a stablecoin not priced yet at its peg; null when unknown.';
