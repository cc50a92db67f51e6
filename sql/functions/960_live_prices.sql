-- Live prices (issue 35): venue prices from the venues' streams (or the simulated venues) →
-- the live index price per coin, by the minute index's rules (market.apply_index_rules), at most
-- once a second → NOTIFY live_prices → every API process reads what changed
-- (market.live_prices_since) and pushes it to its stream subscribers.

-- why: the stream holder writes a second's worth of venue prices in one statement; markets are
-- named as the venue does (ccxt unified symbol), resolved here through market.venue_markets
create or replace function market.record_live_venue_prices(p_exchange text, p_prices jsonb) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange_id int := market.venue_id(p_exchange);
  v_count int;
begin
  insert into market.live_venue_prices as l (exchange_id, coin_id, quote, quote_coin_id, price, at)
  select distinct on (m.base_coin_id, m.quote) v_exchange_id, m.base_coin_id, m.quote, m.quote_coin_id, r.price, r.at
  from jsonb_to_recordset(p_prices) as r (symbol text, price numeric, at timestamptz)
  join market.venue_markets m on m.exchange_id = v_exchange_id and m.symbol = r.symbol and m.instrument = 'spot' and m.active
  where m.base_coin_id is not null and r.price > 0 and r.at is not null
  order by m.base_coin_id, m.quote, r.at desc
  on conflict (coin_id, exchange_id, quote) do update set price = excluded.price, at = excluded.at, quote_coin_id = excluded.quote_coin_id
  where excluded.at >= l.at;
  get diagnostics v_count = row_count;
  -- a venue back after its stream broke off: its clean period starts now
  update market.live_venue_streams set clean_since = now() where exchange_id = v_exchange_id and clean_since is null;
  return v_count;
end;
$$;
comment on function market.record_live_venue_prices(text, jsonb) is 'Writes the latest live prices of a venue (slug = ccxt id) into market.live_venue_prices: p_prices is [{symbol (ccxt unified spot symbol), price (decimal string), at}]; markets not listed spot or not mapped to a coin are skipped, an older price never replaces a newer one. A venue whose stream broke off (market.live_venue_streams) starts its clean period with its first write after that. A malformed price or time rejects the whole call (SQLSTATE 22P02/22007): nothing of it is written. Returns the prices written.';
revoke execute on function market.record_live_venue_prices(text, jsonb) from public;

-- why: the demo market between its minute bars: every simulated venue's spot markets at this
-- second, from the coins' simulated price at the instant (the same formula as their bars)
create or replace function market.simulate_live_venue_prices(p_now timestamptz default now()) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_count int;
  v_epoch double precision := extract(epoch from date_trunc('second', p_now))::double precision;
begin
  with source as (
    select (s.settings ->> 'seed')::bigint as seed from market.data_sources s where s.name = 'simulated'
  ),
  coins as (
    select c.id, market.sim_price(sc.reference_price::double precision, sc.volatility, sc.market_beta,
        market.sim_market_noise(hashtext(s.seed || '/market'), v_epoch),
        market.sim_coin_noise(hashtext(s.seed || '/' || c.slug)::bigint, v_epoch)) as usd
    from market.simulated_coins sc
    join market.coins c on c.id = sc.coin_id and c.status = 'active'
    cross join source s
  ),
  venue_prices as (
    -- each venue within half its spread of the coin price, a new draw every second
    select t.exchange_id, t.base_coin_id, t.quote_symbol, t.quote_coin_id,
      c.usd * (1 + market.sim_hash(t.id, v_epoch::bigint) * x.spread_bps / 20000) as usd,
      coalesce(q.usd, market.usd_rate(t.quote_symbol, t.quote_coin_id)::double precision) as quote_usd
    from market.tickers t
    join market.exchanges e on e.id = t.exchange_id and e.source = 'simulated-exchanges' and e.status = 'active'
    join market.simulated_exchanges x on x.exchange_id = t.exchange_id
    join coins c on c.id = t.base_coin_id
    left join coins q on q.id = t.quote_coin_id
    where t.instrument = 'spot'
  )
  insert into market.live_venue_prices as l (exchange_id, coin_id, quote, quote_coin_id, price, at)
  select v.exchange_id, v.base_coin_id, v.quote_symbol, v.quote_coin_id, market.sim_round(v.usd / v.quote_usd), date_trunc('second', p_now)
  from venue_prices v
  where v.quote_usd > 0 and v.usd > 0
  on conflict (coin_id, exchange_id, quote) do update set price = excluded.price, at = excluded.at, quote_coin_id = excluded.quote_coin_id;
  get diagnostics v_count = row_count;
  return v_count;
end;
$$;
comment on function market.simulate_live_venue_prices(timestamptz) is 'The demo market within the minute: writes the live price of every spot market of the simulated venues at p_now (to the second) into market.live_venue_prices: the coin''s simulated price at that instant (market.sim_price, as its bars), within half the venue''s spread, in the quote at the quote coin''s simulated price (else its USD rate). Deterministic for a given seed and second. Returns the prices written.';
revoke execute on function market.simulate_live_venue_prices(timestamptz) from public;

-- why: the live index by the minute index's rules, once a second, told to every API process
create or replace function market.refresh_live_prices(
  p_max_age interval default '30 seconds',
  p_min_interval interval default '1 second',
  p_max_deviation numeric default 0.05,
  p_min_volume_usd numeric default 10000,
  p_readmit_after interval default '10 seconds',
  p_replay interval default '60 seconds'
) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_now timestamptz := now();
  v_count int;
  v_version bigint;
begin
  -- several holders (one per share of the venues) refresh it: one at a time, each seeing the last's writes
  perform pg_advisory_xact_lock(hashtext('market.refresh_live_prices'));
  drop table if exists index_components;
  create temporary table index_components on commit drop as
  with prices as (
    select p.*,
      case when p.quote = 'USD' then 1::numeric when p.quote_coin_id is null then 1 / nullif(fx.rate, 0) end as fiat_usd,
      t.volume_usd as market_volume_usd
    from market.live_venue_prices p
    -- one market per coin and venue, the one the minute index reads
    join market.index_markets(array(select distinct v.exchange_id from market.live_venue_prices v)) i
      on i.exchange_id = p.exchange_id and i.coin_id = p.coin_id and i.quote = p.quote
    left join market.fx_latest fx on fx.currency = p.quote
    left join market.pair_keys k on k.base_coin_id = p.coin_id and k.quote_symbol = p.quote
    left join market.tickers t on t.pair_id = k.id and t.exchange_id = p.exchange_id and t.instrument = 'spot'
    -- a venue whose stream stalled or failed is left out by age; one whose stream broke off, until
    -- its stream has been clean for p_readmit_after
    where p.at > v_now - p_max_age
      and not exists (select from market.live_venue_streams s
        where s.exchange_id = p.exchange_id and (s.clean_since is null or s.clean_since > v_now - p_readmit_after))
  ),
  -- quote coins priced first from their own USD and fiat markets, the median (as the minute index)
  direct as (
    select p.coin_id, percentile_cont(0.5) within group (order by (p.price * p.fiat_usd)::double precision) as usd
    from prices p
    where p.fiat_usd is not null and p.coin_id in (select quote_coin_id from prices where quote_coin_id is not null)
    group by p.coin_id
  )
  select x.coin_id, v_now as time, x.exchange_id, x.quote, x.market_volume_usd, x.rate, x.price * x.rate as close_usd, null::text as reason
  from (
    select p.*, coalesce(p.fiat_usd, d.usd::numeric, market.usd_rate(p.quote, p.quote_coin_id)) as rate
    from prices p
    left join direct d on d.coin_id = p.quote_coin_id
  ) x;

  perform market.apply_index_rules(p_max_deviation, p_min_volume_usd);

  with computed as (
    select x.coin_id, count(*)::int as venues,
      market.round_significant(coalesce(sum(x.close_usd * x.market_volume_usd) / nullif(sum(x.market_volume_usd), 0), avg(x.close_usd)), 10) as price
    from index_components x
    where x.reason is null
    group by x.coin_id
  ),
  due as (
    select c.* from computed c
    left join market.live_prices l on l.coin_id = c.coin_id
    where c.price > 0 and (l.coin_id is null or (l.at <= v_now - p_min_interval and l.price <> c.price))
    order by c.coin_id
  ),
  written as (
    insert into market.live_prices as l (coin_id, price, venues, at, version)
    select d.coin_id, d.price, d.venues, v_now, nextval('market.live_price_version') from due d
    join market.coins c on c.id = d.coin_id
    on conflict (coin_id) do update set price = excluded.price, venues = excluded.venues, at = excluded.at, version = excluded.version
    returning l.*
  ),
  -- every change, for a stream resuming with Last-Event-ID
  kept as (
    insert into market.live_price_changes (version, coin_id, price, venues, at)
    select w.version, w.coin_id, w.price, w.venues, w.at from written w
  )
  select count(*)::int, max(w.version) into v_count, v_version from written w;
  delete from market.live_price_changes where at < v_now - p_replay;
  drop table index_components, index_medians;
  if v_count > 0 then
    perform pg_notify('live_prices', v_version::text);
  end if;
  return v_count;
end;
$$;
comment on function market.refresh_live_prices(interval, interval, numeric, numeric, interval, interval) is
'The live index price: per coin, the venue prices of market.live_venue_prices younger than p_max_age (of a venue whose stream broke off, only once it has written again without breaking off for p_readmit_after, market.live_venue_streams) of the one market per coin and venue the minute index reads (market.index_markets), converted to USD as the minute index does (USD 1, fiat through market.fx_latest, coin quotes at the quote coin''s median live price on its USD and fiat markets, else its current USD rate, market.usd_rate), with the same rules (market.apply_index_rules: no rate, thin markets and outliers left out); the price is the mean weighted by each market''s 24h USD volume (market.tickers; the plain mean when none has volume), 10 significant digits. '
'A coin''s row in market.live_prices changes at most once per p_min_interval and only when its price does, taking the next version, and each change is kept p_replay in market.live_price_changes (for Last-Event-ID); then NOTIFY live_prices with the newest version. Returns the coins changed.';
revoke execute on function market.refresh_live_prices(interval, interval, numeric, numeric, interval, interval) from public;

-- why: the snapshot a process reads at start, after a missed NOTIFY, and for Last-Event-ID
create or replace function market.live_prices_since(p_version bigint default 0, p_currencies text[] default '{USD}')
returns table (id int, slug text, symbol text, currency text, price text, at text, version bigint)
language sql stable
as $$
  select c.id, c.slug, c.symbol, r.currency,
    market.round_significant(l.price * r.rate, 10)::text,
    to_char(l.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), l.version
  from market.live_prices l
  join market.coins c on c.id = l.coin_id
  cross join lateral (select upper(x) as currency, market.fx_rate(x) as rate from unnest(p_currencies) x) r
  where l.version > coalesce(p_version, 0)
  order by l.version, r.currency
$$;
comment on function market.live_prices_since(bigint, text[]) is 'Live index prices changed after p_version (0: all of them, the snapshot), in each of p_currencies (converted with the latest rate of market.fx_rates; an unknown currency raises MD422), in version order: id, slug, symbol, currency, price (decimal string), at (ISO 8601) and version. What an API process reads on NOTIFY live_prices, and after missing some.';

-- why: a stream resuming with Last-Event-ID gets every change it missed while the replay buffer
-- reaches back to it, else an honest snapshot
create or replace function market.live_replay_covers(p_since bigint) returns boolean
language sql stable
as $$
  -- versions are a sequence with gaps (a rolled-back write): covered when nothing after p_since can have been trimmed
  select p_since >= coalesce((select min(version) - 1 from market.live_price_changes), (select max(version) from market.live_prices), 0)
$$;
comment on function market.live_replay_covers(bigint) is 'Whether market.live_price_changes still holds every live price change after version p_since (the client''s Last-Event-ID): true when p_since is at or after the oldest change kept (or, with none kept, the newest version).';

create or replace function market.live_price_changes_since(p_since bigint, p_coins int[], p_currencies text[] default '{USD}')
returns table (id int, slug text, symbol text, currency text, price text, at text, version bigint, kind text)
language sql stable
as $$
  select c.id, c.slug, c.symbol, r.currency,
    market.round_significant(l.price * r.rate, 10)::text,
    to_char(l.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), l.version, 'live'
  from market.live_price_changes l
  join market.coins c on c.id = l.coin_id
  cross join lateral (select upper(x) as currency, market.fx_rate(x) as rate from unnest(p_currencies) x) r
  where l.version > p_since and l.coin_id = any (p_coins)
  order by l.version, r.currency
$$;
comment on function market.live_price_changes_since(bigint, int[], text[]) is 'Every live price change of coins p_coins after version p_since still kept in market.live_price_changes, in each of p_currencies (at the latest rate), in version order: what a stream resuming with Last-Event-ID is sent when market.live_replay_covers(p_since).';

-- why: a stream opened before a coin has its first live price (the first seconds after a start, a
-- venue stream down) still starts with the coin's price: its latest minute price, marked as such
create or replace function market.live_price_snapshot(p_coins int[], p_currencies text[] default '{USD}')
returns table (id int, slug text, symbol text, currency text, price text, at text, version bigint, kind text)
language sql stable
as $$
  select l.id, l.slug, l.symbol, l.currency, l.price, l.at, l.version, 'live'
  from market.live_prices_since(0, p_currencies) l
  where l.id = any (p_coins)
  union all
  select c.id, c.slug, c.symbol, r.currency, market.round_significant(s.price * r.rate, 10)::text,
    to_char(s.last_updated at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 0, 'minute'
  from market.coin_state s
  join market.coins c on c.id = s.coin_id
  cross join lateral (select upper(x) as currency, market.fx_rate(x) as rate from unnest(p_currencies) x) r
  where s.coin_id = any (p_coins) and s.price is not null
    and not exists (select from market.live_prices l where l.coin_id = s.coin_id)
  order by 7, 4, 1
$$;
comment on function market.live_price_snapshot(int[], text[]) is 'The first event of a live price stream for coins p_coins in each of p_currencies: the live index price (kind live, as market.live_prices_since) of each coin that has one, else its latest minute price from market.coin_state (kind minute, version 0, at its last_updated); a coin with neither is left out.';

-- why: several processes divide the venue streams, each venue held by exactly one, and the
-- venues of a dead holder are taken over by the others once its lease has expired
create or replace function market.take_stream_venues(p_holder text, p_venues text[], p_seconds numeric, p_candles boolean default false) returns text[]
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_until timestamptz := now() + make_interval(secs => p_seconds::double precision);
  v_holders int;
  v_share int;
  v_kept int;
begin
  -- the caller counts in the share from its first call, before it holds anything: the others shed for it
  insert into market.stream_holders as h (holder, venues, expires_at, candles) values (p_holder, p_venues, v_until, p_candles)
  on conflict (holder) do update set venues = excluded.venues, expires_at = excluded.expires_at, candles = excluded.candles;
  delete from market.stream_holders where expires_at < now();
  select count(*) into v_holders from market.stream_holders h where h.venues && p_venues;
  v_share := ceil(coalesce(cardinality(p_venues), 0)::numeric / greatest(v_holders, 1));

  -- beyond the share (another holder came), the venues taken last go first; so does one no longer streamed
  delete from market.stream_leases l
  where l.holder = p_holder and (l.name <> all (p_venues) or l.name in (
    select o.name from market.stream_leases o where o.holder = p_holder and o.name = any (p_venues)
    order by o.acquired_at, o.name offset v_share));
  update market.stream_leases set expires_at = v_until where holder = p_holder;
  get diagnostics v_kept = row_count;

  -- free or expired venues up to the share, in name order: holders reaching for the same one lock it
  -- in the same order (no deadlock), one gets it and the other takes another at its next tick
  insert into market.stream_leases as l (name, holder, acquired_at, expires_at)
  select v, p_holder, now(), v_until from unnest(p_venues) v
  where not exists (select from market.stream_leases o where o.name = v and (o.expires_at >= now() or o.holder = p_holder))
  order by v
  limit greatest(v_share - v_kept, 0)
  on conflict (name) do update set holder = excluded.holder, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at
  where l.expires_at < now();

  return coalesce((select array_agg(l.name order by l.name) from market.stream_leases l where l.holder = p_holder), '{}');
end;
$$;
comment on function market.take_stream_venues(text, text[], numeric, boolean) is 'One tick of stream holder p_holder, which can stream venues p_venues, for p_seconds (p_candles: it holds their one-minute candle feeds too): renews its heartbeat (market.stream_holders) and its venue leases (market.stream_leases), sheds the venues beyond its fair share (the number of venues over the live holders that can stream any of them, rounded up; those it took last first), takes free or expired ones up to that share, and returns the venues it holds now, in name order. A venue is held by exactly one process; a dead holder''s venues are taken by the others once its leases expire (p_seconds after its last tick).';
revoke execute on function market.take_stream_venues(text, text[], numeric, boolean) from public;

-- why: the minute job polls REST candles only where no stream holder brings them, so that a venue's
-- minutes are read once (a dead holder's lease expires and the job polls the venue again, from candles_until)
create or replace function market.stream_candle_venues() returns text[]
language sql stable
as $$
  select coalesce(array_agg(l.name order by l.name), '{}')
  from market.stream_leases l
  join market.stream_holders h on h.holder = l.holder
  where l.expires_at >= now() and h.expires_at >= now() and h.candles
$$;
comment on function market.stream_candle_venues() is 'The venues whose one-minute candles are the stream holders'' now: each held by a live lease (market.stream_leases) of a live holder (market.stream_holders) that holds its candle feeds (candles, STREAM_CANDLES=on), which streams them and fills from REST what its stream misses. The minute job polls the REST candles of the other venues only; once such a lease expires (the holder dead or stopped) the venue is the minute job''s again, from its stored coverage (candles_until).';
revoke execute on function market.stream_candle_venues() from public;

-- why: a minute's index bar is built once its held venues' candles are in (or the wait passed), and
-- /prices, /coins and every minute-based answer see it then, not at the next minute job
create or replace function market.finish_stream_minutes(p_venues text[], p_from timestamptz[], p_to timestamptz[], p_coins int[], p_now timestamptz default now())
returns table (bars int, coins int)
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_from timestamptz := (select min(f) from unnest(p_from) f);
  v_to timestamptz := (select max(t) from unnest(p_to) t);
begin
  -- one holder at a time: two holders finishing a minute would build its bars and the coin state twice at once
  perform pg_advisory_xact_lock(hashtext('market.finish_stream_minutes'));
  if v_from is null then
    bars := 0;
    coins := 0;
    return next;
    return;
  end if;
  select b.bars into bars from market.build_index_bars(v_from, v_to + interval '1 minute', p_coins) b;
  perform market.record_index_bar_delays(p_venues, p_from, p_to, p_now);
  select r.coins into coins from market.refresh_coin_state_timed(now(), false) r;
  return next;
end;
$$;
comment on function market.finish_stream_minutes(text[], timestamptz[], timestamptz[], int[], timestamptz) is 'A stream holder''s minutes done (src/sources/stream/candles.ts CandleFeeds): the candles of venues p_venues written for the minutes p_from[i] to p_to[i] (minute starts, inclusive), of coins p_coins, reach the index at once. Under a lock (one holder at a time): rebuilds those coins'' index bars over the minutes (market.build_index_bars; again if a late candle comes: the final build counts), records each venue''s delay from the minute''s close to its index bar by the holder''s clock p_now (market.record_index_bar_delays), then brings the coin state up to date incrementally, evaluates alarms and bumps the market data version the API cache keys on (market.refresh_coin_state_timed). Returns the bars built and the coins of the coin state written.';
revoke execute on function market.finish_stream_minutes(text[], timestamptz[], timestamptz[], int[], timestamptz) from public;

create or replace function market.release_stream_venues(p_holder text) returns void
language sql volatile
as $$
  delete from market.stream_leases where holder = p_holder;
  delete from market.stream_holders where holder = p_holder;
$$;
comment on function market.release_stream_venues(text) is 'Gives up every venue lease of p_holder and its heartbeat (a process stopping cleanly), so the others take its venues at their next tick.';
revoke execute on function market.release_stream_venues(text) from public;

-- why: several holders each know only their own venues' streams; the source's health shows every venue
create or replace function market.record_stream_venues(p_holder text, p_states jsonb, p_venues text[]) returns void
language sql volatile
as $$
  update market.data_sources s set venues = (
    select coalesce(jsonb_object_agg(v, case
        when p_states ? v then p_states -> v
        when exists (select from market.stream_leases l where l.name = v and l.holder <> p_holder and l.expires_at >= now())
          then coalesce(s.venues -> v, '"down"')
        else '"down"' end), '{}')
    from unnest(p_venues) v)
  where s.name = 'stream'
$$;
comment on function market.record_stream_venues(text, jsonb, text[]) is 'Records in the stream source''s health (market.data_sources.venues of source stream) the state (up/down) of each venue p_venues: as p_states says for the venues holder p_holder holds, as last recorded by their holder for the venues another live holder holds, and down for a venue nobody holds.';
revoke execute on function market.record_stream_venues(text, jsonb, text[]) from public;

-- why: a stream is refused before it opens when it names a coin that does not exist
create or replace function api.stream_coins(p_ids int[], p_slugs text[], p_symbols text[], p_convert text default 'USD')
returns table (coin_id int)
language plpgsql stable
as $$
declare
  v_unknown text;
begin
  perform market.fx_rate(coalesce(p_convert, 'USD'));
  select string_agg(x::text, ', ') into v_unknown from unnest(p_ids) x where not exists (select from market.coins c where c.id = x);
  if v_unknown is not null then
    raise exception 'Unknown coin ids: %.', v_unknown using errcode = 'MD422', column = 'ids';
  end if;
  select string_agg(x, ', ') into v_unknown from unnest(p_slugs) x where not exists (select from market.coin_ids(array[x]));
  if v_unknown is not null then
    raise exception 'Unknown coin slugs: %.', v_unknown using errcode = 'MD422', column = 'slugs';
  end if;
  select string_agg(x, ', ') into v_unknown from unnest(p_symbols) x
  where not exists (select from market.coins c where upper(c.symbol) = upper(x));
  if v_unknown is not null then
    raise exception 'Unknown coin symbols: %.', v_unknown using errcode = 'MD422', column = 'symbols';
  end if;
  return query select r.coin_id from market.resolve_coin_selectors(p_ids, p_slugs, p_symbols) r;
end;
$$;
comment on function api.stream_coins(int[], text[], text[], text) is 'The coins a live price stream selects (ids, slugs, symbols as GET /prices takes them): an unknown selector, or a convert currency without a rate, raises MD422 naming the parameter, so the stream is refused before it opens.';

-- why: the per-key concurrent stream limit holds across API processes, and a dead process's
-- streams stop counting once its rows expire
create or replace function app.claim_stream_slot(p_key_id bigint, p_process text, p_limit int, p_seconds numeric)
returns boolean
language plpgsql volatile
set search_path = app, public, pg_temp
as $$
declare
  v_open int;
begin
  -- one claim per key at a time: the count and the increment are one decision
  perform 1 from app.api_keys where id = p_key_id for update;
  select coalesce(sum(streams), 0) into v_open from app.stream_slots where key_id = p_key_id and expires_at > now();
  if v_open >= p_limit then
    return false;
  end if;
  insert into app.stream_slots as s (key_id, process, streams, expires_at)
  values (p_key_id, p_process, 1, now() + make_interval(secs => p_seconds::double precision))
  on conflict (key_id, process) do update set
    -- an expired row of this process (it was stalled) starts again from this stream
    streams = case when s.expires_at > now() then s.streams + 1 else 1 end,
    expires_at = excluded.expires_at;
  return true;
end;
$$;
comment on function app.claim_stream_slot(bigint, text, int, numeric) is 'Claims one concurrent live stream for key p_key_id in process p_process: true when the key''s unexpired streams over all processes are below p_limit (then counted, valid p_seconds unless renewed), false when the limit is reached.';
revoke execute on function app.claim_stream_slot(bigint, text, int, numeric) from public;

create or replace function app.renew_stream_slots(p_process text, p_streams jsonb, p_seconds numeric) returns void
language sql volatile
set search_path = app, public, pg_temp
as $$
  -- the process's own count is the truth: rows of keys it no longer streams for go
  delete from app.stream_slots s
  where s.process = p_process and not (p_streams ? s.key_id::text and (p_streams ->> s.key_id::text)::int > 0);
  insert into app.stream_slots as s (key_id, process, streams, expires_at)
  select k.id, p_process, (x.value)::int, now() + make_interval(secs => p_seconds::double precision)
  from jsonb_each_text(p_streams) x
  join app.api_keys k on k.id = x.key::bigint
  where (x.value)::int > 0
  on conflict (key_id, process) do update set streams = excluded.streams, expires_at = excluded.expires_at;
  -- rows of processes gone for a while are only clutter
  delete from app.stream_slots where expires_at < now() - interval '1 hour';
$$;
comment on function app.renew_stream_slots(text, jsonb, numeric) is 'Sets the live streams process p_process has open per key (p_streams: {"<key id>": n}) and renews them for p_seconds; a key it no longer streams for is released. Called by every API process while it runs and when a stream closes.';
revoke execute on function app.renew_stream_slots(text, jsonb, numeric) from public;

-- why: a venue whose stream broke off (disconnected, stalled, garbage) is out of the live price
-- at once, and back only once its stream has been clean for a while (the REST resynchronisation's
-- prices alone do not readmit it); its prices stay, so their age tells how long it has been out
create or replace function market.forget_live_venue_prices(p_exchange text) returns int
language plpgsql volatile
set search_path = market, public, pg_temp
as $$
declare
  v_exchange_id int := market.venue_id(p_exchange);
  v_count int;
begin
  insert into market.live_venue_streams as s (exchange_id, cut_at, clean_since) values (v_exchange_id, now(), null)
  on conflict (exchange_id) do update set cut_at = excluded.cut_at, clean_since = null;
  select count(*)::int into v_count from market.live_venue_prices where exchange_id = v_exchange_id;
  return v_count;
end;
$$;
comment on function market.forget_live_venue_prices(text) is 'A venue''s (slug = ccxt id) stream broke off: its live venue prices are left out of the live index price from now on (market.live_venue_streams), until it has written prices again (market.record_live_venue_prices, its REST resynchronisation first) and not broken off for the readmission period (market.refresh_live_prices'' p_readmit_after, STREAM_READMIT_SECONDS). Its prices are kept, so their age keeps growing (mdapi_live_price_age_seconds). Returns the prices left out.';
revoke execute on function market.forget_live_venue_prices(text) from public;
