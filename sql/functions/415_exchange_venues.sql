-- The real venues (src/sources/exchanges): what ccxt read from each venue arrives here as JSON
-- text, is validated and written in one statement per call, so a venue that answers garbage
-- writes nothing. Prices travel as decimal strings and become numeric here.

-- why: venue metadata is curated (ccxt has little of it): one idempotent load per catalogue version
create or replace function market.load_exchange_venues(p_venues jsonb) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
begin
  create temporary table venue_rows on commit drop as
  select x.* from jsonb_to_recordset(p_venues) as x (
    slug text, name text, taxonomy text[], established date, location text, website text, logo text, verified boolean);

  insert into market.exchanges as e (slug, name, taxonomy, status, established, location, website, logo, source, verified)
  select v.slug, v.name, coalesce(v.taxonomy, '{centralized,custodial,spot}'), 'active', v.established, v.location,
    v.website, v.logo, 'exchanges', coalesce(v.verified, true)
  from venue_rows v
  on conflict (slug) do update set
    name = excluded.name, taxonomy = excluded.taxonomy, status = 'active', established = excluded.established,
    location = excluded.location, website = excluded.website, logo = coalesce(excluded.logo, e.logo), source = 'exchanges',
    verified = excluded.verified;
  get diagnostics v_count = row_count;

  -- a venue the demo simulated before is real from now on: its made-up markets go
  delete from market.tickers t using market.exchanges e, venue_rows v
  where e.slug = v.slug and t.exchange_id = e.id
    and exists (select from market.simulated_exchanges s where s.exchange_id = e.id);
  delete from market.simulated_exchanges s using market.exchanges e, venue_rows v
  where e.slug = v.slug and s.exchange_id = e.id;

  insert into market.venue_status (exchange_id)
  select e.id from market.exchanges e join venue_rows v on v.slug = e.slug
  on conflict do nothing;
  drop table venue_rows;
  return v_count;
end;
$$;
comment on function market.load_exchange_venues(jsonb) is 'Loads the real venues (slug = ccxt id, name, taxonomy, established, location, website, logo, verified: false for a ccxt id beyond the supported venues, default true) as exchanges of source exchanges, with their fetch state; a venue the demo simulated under the same slug becomes real (its simulated tickers are removed). Returns the venues written.';
revoke execute on function market.load_exchange_venues(jsonb) from public;

-- why: every ingest names its venue by slug; an unknown one is the caller's mistake, said once
create or replace function market.venue_id(p_exchange text) returns int
language plpgsql stable
as $$
declare
  v_id int;
begin
  select i into v_id from market.exchange_ids(array[p_exchange]) i;
  if v_id is null then
    raise exception 'unknown venue %', p_exchange using errcode = '22023';
  end if;
  return v_id;
end;
$$;
comment on function market.venue_id(text) is 'The id of the venue with slug p_exchange (its ccxt id); SQLSTATE 22023 when there is none.';

-- why: listings and delistings are read off each load of a venue's markets
create or replace function market.ingest_venue_markets(p_exchange text, p_markets jsonb, p_at timestamptz default now())
returns table (markets int, listed int, delisted int, mapped int)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange int;
  v_active int;
  v_incoming int;
begin
  v_exchange := market.venue_id(p_exchange);

  create temporary table market_rows on commit drop as
  select x.symbol, x.id as exchange_symbol, upper(x.base) as base, upper(x.quote) as quote,
    case x.type when 'spot' then 'spot' when 'swap' then 'swap' when 'future' then 'future'
      when 'option' then 'option' when 'margin' then 'margin' end as instrument,
    x."contractSize" as contract_size, coalesce(x.active, true) as active,
    null::int as base_coin_id, null::int as quote_coin_id
  from jsonb_to_recordset(p_markets) as x (symbol text, id text, base text, quote text, type text, "contractSize" numeric, active boolean);

  if exists (select from market_rows r where r.symbol is null or r.exchange_symbol is null or r.base is null
      or r.quote is null or r.instrument is null) then
    raise exception 'malformed market list from %', p_exchange using errcode = '22P02';
  end if;

  -- a list that lost more than half of the venue's markets at once is a bad answer, not a mass delisting
  select count(*)::int into v_active from market.venue_markets m where m.exchange_id = v_exchange and m.active;
  select count(*)::int into v_incoming from market_rows r where r.active;
  if v_incoming * 2 < v_active then
    raise exception 'market list of % cut short: % active markets where % are listed', p_exchange, v_incoming, v_active
      using errcode = 'MDV01';
  end if;

  -- currency codes to coins, the venue's overrides first; fiat quotes (USD, EUR …) are no coin
  create temporary table code_coins on commit drop as
  select v.symbol, v.coin_id from market.venue_coins(p_exchange,
    (select array_agg(distinct c) from market_rows r cross join lateral (values (r.base), (r.quote)) as u (c))) v
  where v.coin_id is not null and not exists (select from market.fiat_currencies f where f.code = v.symbol);
  update market_rows r set base_coin_id = c.coin_id from code_coins c where c.symbol = r.base;
  update market_rows r set quote_coin_id = c.coin_id from code_coins c where c.symbol = r.quote;

  -- a base code of no coin, traded spot against USD, EUR, a USD stablecoin, bitcoin or ethereum, becomes one
  insert into code_coins (symbol, coin_id)
  select d.code, d.coin_id from market.discover_venue_coins(p_exchange, array(
    select distinct r.base from market_rows r
    where r.instrument = 'spot' and r.active and r.base_coin_id is null
      and (r.quote in ('USD', 'EUR') or r.quote_coin_id in (
        select c.id from market.coins c where c.peg = 'USD' or c.slug in ('bitcoin', 'ethereum')))), p_at) d;
  update market_rows r set base_coin_id = c.coin_id from code_coins c where c.symbol = r.base and r.base_coin_id is null;
  update market_rows r set quote_coin_id = c.coin_id from code_coins c where c.symbol = r.quote and r.quote_coin_id is null;

  with written as (
    insert into market.venue_markets as m (exchange_id, symbol, exchange_symbol, base, quote, base_coin_id, quote_coin_id,
      instrument, contract_size, active, listed_at, delisted_at)
    select v_exchange, r.symbol, r.exchange_symbol, r.base, r.quote, r.base_coin_id, r.quote_coin_id, r.instrument,
      r.contract_size, r.active, p_at, case when not r.active then p_at end
    from market_rows r
    on conflict (exchange_id, symbol) do update set
      exchange_symbol = excluded.exchange_symbol, base = excluded.base, quote = excluded.quote,
      base_coin_id = excluded.base_coin_id, quote_coin_id = excluded.quote_coin_id, instrument = excluded.instrument,
      contract_size = excluded.contract_size, active = excluded.active,
      listed_at = case when excluded.active and not m.active then p_at else m.listed_at end,
      delisted_at = case when excluded.active then null else coalesce(m.delisted_at, p_at) end
    returning (xmax = 0 or (m.active and m.listed_at = p_at)) as fresh, m.active, m.base_coin_id
  )
  select count(*)::int, count(*) filter (where w.fresh and w.active)::int, count(*) filter (where w.base_coin_id is not null)::int
  into markets, listed, mapped from written w;

  update market.venue_markets m set active = false, delisted_at = p_at
  where m.exchange_id = v_exchange and m.active and not exists (select from market_rows r where r.symbol = m.symbol);
  get diagnostics delisted = row_count;
  delisted := delisted + (select count(*) from market_rows r where not r.active)::int;

  -- a market that is gone takes its ticker with it
  delete from market.tickers t
  where t.exchange_id = v_exchange and not exists (
    select from market.venue_markets m
    where m.exchange_id = v_exchange and m.active and m.base_coin_id = t.base_coin_id
      and m.quote = t.quote_symbol and m.instrument = t.instrument);

  -- a coin is listed while any venue trades it spot (the index is made of spot candles), delisted once none does
  update market.coins c set status = s.status, status_updated_at = p_at
  from (
    select m.base_coin_id as coin_id, case when bool_or(m.active) then 'active' else 'delisted' end as status
    from market.venue_markets m
    where m.base_coin_id is not null and m.instrument = 'spot'
    group by m.base_coin_id
  ) s
  where s.coin_id = c.id and c.status is distinct from s.status and c.status in ('active', 'delisted', 'untracked');

  update market.venue_status set markets_loaded_at = p_at where exchange_id = v_exchange;
  drop table market_rows, code_coins;
  return next;
end;
$$;
comment on function market.ingest_venue_markets(text, jsonb, timestamptz) is 'Writes the markets a venue lists (ccxt market structures: symbol, id, base, quote, type, contractSize, active) into market.venue_markets, mapping currencies to coins (market.venue_coins) and making coins of base codes that map to none but trade spot against USD, EUR, a USD stablecoin, bitcoin or ethereum (market.discover_venue_coins); a list with fewer than half the venue''s active markets is refused whole (SQLSTATE MDV01), as is a malformed one (22P02); markets no longer listed are marked delisted and lose their ticker, and coins become active while any venue lists them spot and delisted once none does. Returns the markets received, newly listed, delisted, and mapped to a coin.';
revoke execute on function market.ingest_venue_markets(text, jsonb, timestamptz) from public;

-- why: the candles of one venue in one statement: all of them or, on a malformed one, none; REST
-- and stream candles by the same checks into the same table, the venue's REST value of a minute kept
create or replace function market.ingest_venue_candles(p_exchange text, p_candles jsonb, p_width interval default interval '1 minute', p_path text default 'rest')
returns table (candles int, first_time timestamptz, last_time timestamptz, coins int[], disagreements int)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange int;
  v_bad text;
begin
  if p_path not in ('rest', 'stream') then
    raise exception 'unknown candle path %', p_path using errcode = '22023';
  end if;
  v_exchange := market.venue_id(p_exchange);

  create temporary table candle_rows on commit drop as
  select c ->> 0 as symbol, c ->> 1 as ms, c ->> 2 as open, c ->> 3 as high, c ->> 4 as low, c ->> 5 as close, c ->> 6 as volume
  from jsonb_array_elements(p_candles) c;

  select format('%s %s', r.symbol, r.ms) into v_bad from candle_rows r
  where r.ms !~ '^\d{10,16}$'
    or not (r.open ~ '^\d+(\.\d+)?$' and r.high ~ '^\d+(\.\d+)?$' and r.low ~ '^\d+(\.\d+)?$'
      and r.close ~ '^\d+(\.\d+)?$' and coalesce(r.volume, '0') ~ '^\d+(\.\d+)?$')
    or r.low::numeric <= 0 or r.high::numeric < greatest(r.open::numeric, r.close::numeric, r.low::numeric)
    or r.low::numeric > least(r.open::numeric, r.close::numeric)
  limit 1;
  if v_bad is not null then
    raise exception 'malformed candle from %: %', p_exchange, v_bad using errcode = '22P02';
  end if;

  create temporary table candle_parsed on commit drop as
  select distinct on (p.base_coin_id, p.time, p.quote) p.*
  from (
    select to_timestamp(r.ms::numeric / 1000) as time, m.symbol, m.base_coin_id, m.quote,
      r.open::numeric as open, r.high::numeric as high, r.low::numeric as low, r.close::numeric as close,
      coalesce(r.volume, '0')::numeric as volume
    from candle_rows r
    join market.venue_markets m on m.exchange_id = v_exchange and m.symbol = r.symbol and m.instrument = 'spot'
    where m.base_coin_id is not null
  ) p
  order by p.base_coin_id, p.time, p.quote;

  -- a minute both paths brought with different values: a stream candle after a REST one, or a REST
  -- candle over a stream one (a REST candle over a REST one is the venue correcting itself)
  select count(*)::int into disagreements
  from candle_parsed p
  join market.venue_bars_1m b on b.coin_id = p.base_coin_id and b.time = p.time and b.exchange_id = v_exchange and b.quote = p.quote
  where (p_path = 'stream' or b.path = 'stream')
    and (b.open, b.high, b.low, b.close, b.volume) is distinct from (p.open, p.high, p.low, p.close, p.volume);

  with written as (
    insert into market.venue_bars_1m as b (time, coin_id, exchange_id, quote, open, high, low, close, volume, path)
    select p.time, p.base_coin_id, v_exchange, p.quote, p.open, p.high, p.low, p.close, p.volume, p_path
    from candle_parsed p
    on conflict (coin_id, time, exchange_id, quote) do update set
      open = excluded.open, high = excluded.high, low = excluded.low, close = excluded.close, volume = excluded.volume, path = excluded.path
      -- the venue's REST value of a minute stands: a stream candle never replaces a stored one
      where excluded.path = 'rest'
    returning b.time, b.coin_id
  ),
  -- a stream's minutes move the coverage only where they join it without a gap: a minute the stream
  -- skipped stays before candles_until, for a REST fill (or the minute job) to find
  coverage as (
    update market.venue_markets m set candles_until = greatest(m.candles_until, c.until)
    from (select p.symbol, min(p.time) as first, max(p.time) + p_width as until, count(*) as minutes
          from candle_parsed p group by p.symbol) c
    where m.exchange_id = v_exchange and m.symbol = c.symbol and p_width = interval '1 minute'
      and (p_path = 'rest' or m.candles_until is null
        or (c.first <= m.candles_until and c.until <= m.candles_until + p_width * c.minutes))
  )
  select count(*)::int, min(w.time), max(w.time), array_agg(distinct w.coin_id) into candles, first_time, last_time, coins from written w;

  if p_width = interval '1 minute' then
    insert into market.venue_candle_counts as k (exchange_id, outcome, candles)
    select v_exchange, o.outcome, o.n from (values (p_path, candles), ('disagreement', disagreements)) o (outcome, n) where o.n > 0
    on conflict (exchange_id, outcome) do update set candles = k.candles + excluded.candles;
  end if;
  drop table candle_rows, candle_parsed;
  return next;
end;
$$;
comment on function market.ingest_venue_candles(text, jsonb, interval, text) is 'Writes closed candles of one venue ([symbol, open time in ms, open, high, low, close, base volume] with decimal strings) into market.venue_bars_1m for markets mapped to a coin; 1-minute candles also advance the market''s candles_until (stream candles only where they join it without a gap). p_path: rest (the venue''s REST candles) or stream (its candle or trade stream): the same checks and the same table, but a stream candle never replaces a stored minute while a REST candle replaces a stream one, so a minute is stored once and the venue''s REST value wins; a minute both paths brought with different values counts as a disagreement (market.venue_candle_counts, with the candles each path wrote). A malformed candle (bad number, high below low …) rejects the whole call (SQLSTATE 22P02). Returns the candles written, their time span, their coins (what market.build_index_bars must rebuild) and the disagreements.';
revoke execute on function market.ingest_venue_candles(text, jsonb, interval, text) from public;

-- why: a stream candle refused before it reaches the database is counted where the written ones are
create or replace function market.count_venue_candles(p_exchange text, p_outcome text, p_candles int)
returns void
language sql volatile
set search_path = market, public, pg_temp
as $$
  insert into market.venue_candle_counts as k (exchange_id, outcome, candles)
  select market.venue_id(p_exchange), p_outcome, p_candles where p_candles > 0
  on conflict (exchange_id, outcome) do update set candles = k.candles + excluded.candles
$$;
comment on function market.count_venue_candles(text, text, int) is 'Adds p_candles to a venue''s count of candles of an outcome (market.venue_candle_counts): the stream holder counts the stream candles it refuses (refused_future, refused_not_decimal, refused_volume_down, refused_unlisted).';
revoke execute on function market.count_venue_candles(text, text, int) from public;

-- why: the venue's ticker snapshot, in USD through the same quote rates as the index
create or replace function market.ingest_venue_tickers(p_exchange text, p_tickers jsonb, p_at timestamptz default now())
returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange int;
  v_bad text;
  v_count int;
begin
  v_exchange := market.venue_id(p_exchange);

  create temporary table ticker_rows on commit drop as
  select x.* from jsonb_to_recordset(p_tickers) as x (
    symbol text, last text, bid text, ask text, "baseVolume" text, "quoteVolume" text, percentage text, "timestamp" text);

  select r.symbol into v_bad from ticker_rows r
  where r.symbol is null
    or r.last !~ '^\d+(\.\d+)?$' or coalesce(r.bid, '0') !~ '^\d+(\.\d+)?$' or coalesce(r.ask, '0') !~ '^\d+(\.\d+)?$'
    or coalesce(r."baseVolume", '0') !~ '^\d+(\.\d+)?$' or coalesce(r."quoteVolume", '0') !~ '^\d+(\.\d+)?$'
    or coalesce(r.percentage, '0') !~ '^-?\d+(\.\d+)?$' or coalesce(r."timestamp", '0') !~ '^\d{1,16}$'
  limit 1;
  if v_bad is not null then
    raise exception 'malformed ticker from %: %', p_exchange, v_bad using errcode = '22P02';
  end if;

  create temporary table ticker_parsed on commit drop as
  select m.base_coin_id, m.quote, m.quote_coin_id, m.instrument, m.exchange_symbol,
    r.last::numeric as price, nullif(r.bid, '')::numeric as bid, nullif(r.ask, '')::numeric as ask,
    r."baseVolume"::numeric as volume_base, r."quoteVolume"::numeric as volume_quote,
    r.percentage::double precision as change_24h,
    case when r."timestamp"::bigint > 0 then to_timestamp(r."timestamp"::numeric / 1000) end as last_trade_at,
    market.usd_rate(m.quote, m.quote_coin_id) as rate
  from ticker_rows r
  join market.venue_markets m on m.exchange_id = v_exchange and m.symbol = r.symbol and m.active and m.instrument = 'spot'
  where m.base_coin_id is not null and r.last::numeric > 0;
  -- a quote without a USD rate yet (its coin not priced) waits for the next minute
  delete from ticker_parsed where rate is null or rate <= 0;

  insert into market.pair_keys (base_coin_id, quote_symbol, quote_coin_id)
  select distinct p.base_coin_id, p.quote, p.quote_coin_id from ticker_parsed p
  on conflict (base_coin_id, quote_symbol) do nothing;

  insert into market.tickers as t (exchange_id, pair_id, base_coin_id, quote_symbol, quote_coin_id, instrument, exchange_symbol,
    price, price_usd, bid, ask, spread, volume_base, volume_usd, change_24h, last_trade_at, updated_at)
  select distinct on (k.id, p.instrument) v_exchange, k.id, p.base_coin_id, p.quote, p.quote_coin_id, p.instrument, p.exchange_symbol,
    p.price, market.round_significant(p.price * p.rate, 10), p.bid, p.ask,
    case when p.bid > 0 and p.ask >= p.bid then round((p.ask - p.bid) / ((p.ask + p.bid) / 2) * 100, 4)::double precision end,
    coalesce(p.volume_base, 0),
    round(coalesce(p.volume_quote * p.rate, p.volume_base * p.price * p.rate, 0), 2),
    round(p.change_24h::numeric, 2)::double precision, p.last_trade_at, date_trunc('second', p_at)
  from ticker_parsed p
  join market.pair_keys k on k.base_coin_id = p.base_coin_id and k.quote_symbol = p.quote
  order by k.id, p.instrument, p.volume_base desc nulls last
  on conflict (exchange_id, pair_id, instrument) do update set
    exchange_symbol = excluded.exchange_symbol, quote_coin_id = excluded.quote_coin_id, price = excluded.price,
    price_usd = excluded.price_usd, bid = excluded.bid, ask = excluded.ask, spread = excluded.spread,
    volume_base = excluded.volume_base, volume_usd = excluded.volume_usd, change_24h = excluded.change_24h,
    last_trade_at = excluded.last_trade_at, updated_at = excluded.updated_at;
  get diagnostics v_count = row_count;
  drop table ticker_rows, ticker_parsed;
  perform app.bump_data_version('market');
  return v_count;
end;
$$;
comment on function market.ingest_venue_tickers(text, jsonb, timestamptz) is 'Writes a venue''s ticker snapshot (ccxt ticker structures with decimal strings: symbol, last, bid, ask, baseVolume, quoteVolume, percentage, timestamp) into market.tickers for its listed markets mapped to a coin: USD price and 24h USD volume through the quote''s USD rate (USD 1, fiat via market.fx_latest, coin quotes at the quote coin''s current price, a stablecoin without one yet at its peg), spread in percent of the mid price. A malformed ticker rejects the whole call (SQLSTATE 22P02). Returns the tickers written.';
revoke execute on function market.ingest_venue_tickers(text, jsonb, timestamptz) from public;

-- why: a failing venue is skipped for a while that doubles with each failure, so the others go on
-- and the venue is not hammered; the state is in the database, shared by every worker and every
-- kind of request (src/sources/exchanges/gate.ts): p_at is the gate's clock (tests run it fast)
create or replace function market.record_venue_run(p_exchange text, p_requests int, p_error text default null,
  p_retry_after_seconds int default null, p_at timestamptz default now())
returns timestamptz
language sql volatile
as $$
  update market.venue_status s set
    requests = s.requests + greatest(p_requests, 0),
    failures = case when p_error is null then 0 else s.failures + 1 end,
    backoff_until = case when p_error is null then null
      else p_at + greatest(make_interval(secs => coalesce(p_retry_after_seconds, 0)),
        least(interval '30 minutes', interval '30 seconds' * power(2, least(s.failures, 10)))) end,
    last_success_at = case when p_error is null then p_at else s.last_success_at end,
    last_error = coalesce(left(p_error, 500), s.last_error),
    last_error_at = case when p_error is null then s.last_error_at else p_at end
  where s.exchange_id in (select i from market.exchange_ids(array[p_exchange]) i)
  returning s.backoff_until;
$$;
comment on function market.record_venue_run(text, int, text, int, timestamptz) is 'Records one fetch run of a real venue at p_at: the requests it made and success (failures reset) or its error, after which every request to the venue waits until backoff_until: 30 s doubling per consecutive failure up to 30 minutes, or the venue''s Retry-After when longer. Returns backoff_until.';
revoke execute on function market.record_venue_run(text, int, text, int, timestamptz) from public;

-- why: a read beside the runs (the stream holder's resynchronisation and market load, liquidations)
-- counts its requests but must not clear the failures the minute job recorded
create or replace function market.record_venue_requests(p_exchange text, p_requests int)
returns void
language sql volatile
as $$
  update market.venue_status s set requests = s.requests + greatest(p_requests, 0)
  where s.exchange_id in (select i from market.exchange_ids(array[p_exchange]) i) and p_requests > 0;
$$;
comment on function market.record_venue_requests(text, int) is 'Counts requests made to a real venue by a successful read outside its fetch runs (stream resynchronisation, market load, liquidations), leaving its failures and back-off as they are.';
revoke execute on function market.record_venue_requests(text, int) from public;

-- why: the gate every request passes; one statement for the minute job, the backfill and the holder
create or replace function market.venue_backoff(p_exchanges text[], p_at timestamptz default now())
returns table (exchange text, backoff_until timestamptz)
language sql stable
as $$
  select e.slug, s.backoff_until
  from market.venue_status s join market.exchanges e on e.id = s.exchange_id
  where e.slug = any(p_exchanges) and s.backoff_until > p_at
$$;
comment on function market.venue_backoff(text[], timestamptz) is 'The venues among p_exchanges that no request may reach at p_at (REST back-off or Retry-After), with until when.';

-- why: the stream's reconnections have their own back-off, seconds to minutes, jittered so that
-- several venues (or a restarted holder) do not reconnect in step; it never touches REST health
create or replace function market.record_venue_stream(p_exchange text, p_error text, p_at timestamptz default now(),
  p_jitter double precision default random())
returns timestamptz
language sql volatile
as $$
  update market.venue_status s set
    stream_attempts = s.stream_attempts + 1,
    -- a stream that stayed up a minute was healthy: its next failure starts the back-off again
    stream_failures = case when p_error is null then s.stream_failures
      when s.stream_up_since <= p_at - interval '1 minute' then 1 else s.stream_failures + 1 end,
    stream_backoff_until = case when p_error is null then null
      else p_at + least(interval '5 minutes', interval '2 seconds' * power(2, least(
        case when s.stream_up_since <= p_at - interval '1 minute' then 0 else s.stream_failures end, 20)))
        * (0.5 + 0.5 * least(greatest(p_jitter, 0), 1)) end,
    stream_up_since = case when p_error is null then p_at end,
    stream_last_error = coalesce(left(p_error, 500), s.stream_last_error),
    stream_last_error_at = case when p_error is null then s.stream_last_error_at else p_at end
  where s.exchange_id in (select i from market.exchange_ids(array[p_exchange]) i)
  returning s.stream_backoff_until;
$$;
comment on function market.record_venue_stream(text, text, timestamptz, double precision) is 'Records one live stream connection of a real venue at p_at: subscribed and resynchronised (p_error null) or failed/ended with p_error, after which the holder waits until the returned stream_backoff_until: 2 s doubling per consecutive failure up to 5 minutes, times a jitter between 0.5 and 1 (p_jitter in [0, 1]); a stream up for a minute starts the count again. REST health (failures, backoff_until) is not touched.';
revoke execute on function market.record_venue_stream(text, text, timestamptz, double precision) from public;

-- why: each holder knows only its own venues' candle feeds; the operators' figures read them from SQL
create or replace function market.record_venue_candle_markets(p_counts jsonb, p_at timestamptz default now())
returns void
language sql volatile
as $$
  update market.venue_status s set
    stream_markets = greatest((c.value ->> 'streamed')::int, 0),
    rest_fallback_markets = greatest((c.value ->> 'fallback')::int, 0),
    candle_markets_at = p_at
  from jsonb_each(p_counts) c
  join market.exchanges e on e.slug = lower(c.key)
  where s.exchange_id = e.id
$$;
comment on function market.record_venue_candle_markets(jsonb, timestamptz) is 'Records the candle markets of the venues a stream holder holds, as counted at p_at: p_counts maps each venue (its ccxt id) to {"streamed": markets its candle stream delivers, "fallback": markets taken from REST alone}. Read by market.venue_health.';
revoke execute on function market.record_venue_candle_markets(jsonb, timestamptz) from public;

create or replace view market.venue_health as
select e.slug as exchange, e.name, s.failures, s.backoff_until,
  case when s.backoff_until > now() then 'down' when s.last_success_at is null then 'idle' else 'up' end as state,
  s.last_success_at, s.last_error, s.last_error_at, s.markets_loaded_at, s.requests,
  (select count(*) from market.venue_markets m where m.exchange_id = e.id and m.active)::int as markets,
  (select max(m.candles_until) from market.venue_markets m where m.exchange_id = e.id) as candles_until,
  case when s.stream_up_since is not null then 'up' when s.stream_attempts = 0 then 'idle' else 'down' end as stream_state,
  case when s.stream_up_since <= now() - interval '1 minute' then 0 else s.stream_failures end as stream_failures,
  s.stream_backoff_until, s.stream_attempts, s.stream_last_error, s.stream_last_error_at,
  case when s.candle_markets_at > now() - interval '2 minutes' then s.stream_markets end as markets_streamed,
  case when s.candle_markets_at > now() - interval '2 minutes' then s.rest_fallback_markets end as markets_rest_fallback,
  c.stream_per_minute as candles_per_minute_stream, c.rest_per_minute as candles_per_minute_rest,
  d.p50 as index_delay_p50_seconds, d.p99 as index_delay_p99_seconds
from market.venue_status s
join market.exchanges e on e.id = s.exchange_id
-- the last 5 closed minutes: their candles by path, and how long after its close each minute's index bars were built (market.index_bar_delays)
cross join lateral (
  select round(count(*) filter (where b.path = 'stream') / 5.0, 1) as stream_per_minute,
    round(count(*) filter (where b.path = 'rest') / 5.0, 1) as rest_per_minute
  from market.venue_bars_1m b
  where b.exchange_id = e.id and b.time >= date_trunc('minute', now()) - interval '5 minutes' and b.time < date_trunc('minute', now())
) c
cross join lateral (
  select round(percentile_cont(0.5) within group (order by x.delay_seconds)::numeric, 1) as p50,
    round(percentile_cont(0.99) within group (order by x.delay_seconds)::numeric, 1) as p99
  from market.index_bar_delays x
  where x.exchange_id = e.id and x.minute >= date_trunc('minute', now()) - interval '5 minutes' and x.minute < date_trunc('minute', now())
) d;
comment on view market.venue_health is 'Each real venue''s fetch state (REST: the minute job, backfill, liquidations and the stream holder''s REST reads): consecutive failures, skipped until (back-off), state (down while backing off, idle before its first success, else up), last success and error, when markets were loaded, requests made, markets listed and the newest stored 1-minute candle; then its live stream''s health, kept apart: stream state (up while connected and resynchronised, idle before any attempt, else down), consecutive failed connections, back-off, attempts, last stream error; then its one-minute candles (issue 46): markets streamed and markets on REST fallback as the venue''s stream holder last counted them (null when no holder counted in the last 2 minutes: the minute job polls the venue), candles per minute by path (stream, rest) over the last 5 closed minutes (candles stored for those minutes, a REST candle replacing a stream one counted as rest), and the delay in seconds from a minute''s close to its index bar (market.index_bar_delays: the final build of the minute with the venue''s candles), p50 and p99 over the last 5 closed minutes (null without such rows).';

-- why: one market per coin and venue carries its candles (the most traded), for the live tick and the backfill alike
create or replace function market.venue_candle_markets(p_exchange text)
returns table (symbol text, coin_id int, candles_until timestamptz)
language sql stable
as $$
  select i.symbol, i.coin_id, i.candles_until
  from market.index_markets(array(select market.exchange_ids(array[p_exchange]))) i
$$;
comment on function market.venue_candle_markets(text) is 'The spot market of each coin on a venue whose candles feed the price index (market.index_markets): the coin''s most traded listed market there (24h USD volume of its ticker; by symbol before any ticker), with how far its 1-minute candles are stored.';

-- why: the stream holder checks what it counts stored against what is: a minute lost between stored ones is filled again
create or replace function market.venue_candle_gaps(p_exchange text, p_symbols text[], p_from timestamptz, p_to timestamptz)
returns table (symbol text, minute timestamptz)
language sql stable
as $$
  with stored as (
    select m.symbol, b.time
    from market.venue_markets m
    join market.venue_bars_1m b on b.exchange_id = m.exchange_id and b.coin_id = m.base_coin_id and b.quote = m.quote
    where m.exchange_id in (select i from market.exchange_ids(array[p_exchange]) i)
      and m.symbol = any(p_symbols) and b.time >= p_from and b.time < p_to
  )
  select s.symbol, g.minute
  from (select t.symbol, min(t.time) as first, max(t.time) as last from stored t group by t.symbol) s
  cross join lateral generate_series(s.first, s.last, interval '1 minute') g(minute)
  except
  select t.symbol, t.time from stored t
$$;
comment on function market.venue_candle_gaps(text, text[], timestamptz, timestamptz) is 'The minutes in [p_from, p_to) missing between stored 1-minute candles (market.venue_bars_1m) of the given markets of a venue (ccxt id, unified symbols): a minute before a market''s first stored one in the range or after its last is not a gap. The stream holder asks its REST for them again once a minute (STREAM_CANDLE_CHECK_SECONDS), unless the venue''s REST answered that it has none (a minute without trades).';

-- why: operators see how soon each venue's candles reach the price index, streams against REST
create or replace function market.record_index_bar_delays(p_venues text[], p_from timestamptz[], p_to timestamptz[], p_now timestamptz default now()) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_written int;
begin
  insert into market.index_bar_delays as d (exchange_id, minute, bar_at, delay_seconds, stream_candles, rest_candles)
  select b.exchange_id, b.time, p_now, extract(epoch from p_now - (b.time + interval '1 minute')),
    count(*) filter (where b.path = 'stream'), count(*) filter (where b.path = 'rest')
  from unnest(p_venues, p_from, p_to) as r(venue, first_minute, last_minute)
  join market.exchanges e on e.slug = r.venue
  join market.venue_bars_1m b on b.exchange_id = e.id and b.time between r.first_minute and r.last_minute
  group by b.exchange_id, b.time
  on conflict (exchange_id, minute) do update
    set bar_at = excluded.bar_at, delay_seconds = excluded.delay_seconds, stream_candles = excluded.stream_candles, rest_candles = excluded.rest_candles;
  get diagnostics v_written = row_count;
  delete from market.index_bar_delays where minute < p_now - interval '2 days';
  return v_written;
end;
$$;
comment on function market.record_index_bar_delays(text[], timestamptz[], timestamptz[], timestamptz) is 'Records in market.index_bar_delays, for each venue p_venues[i] and each minute from p_from[i] to p_to[i] (minute starts, inclusive) it has candles of, that the minute''s index bars were built at p_now with them: the delay from the minute''s close to p_now and the venue''s candles of the minute per path. A later build of the same minute (a late candle) replaces the row: the final build counts. Rows older than two days go. Called right after market.build_index_bars by the minute job (the venues it polled) and by market.finish_stream_minutes (a stream holder''s). Returns the rows written.';
revoke execute on function market.record_index_bar_delays(text[], timestamptz[], timestamptz[], timestamptz) from public;
