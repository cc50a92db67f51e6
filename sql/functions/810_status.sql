-- What GET /status and /status.json show, in one call: each component's state and figures. The
-- database and worker figures come from app.readiness (as /readyz reads them), the sources from
-- market.source_health; the thresholds live here, once, and are listed in the comment below and in
-- docs/status.md. The page is public: no error texts (they may name internal hosts), only states and ages.
create or replace function app.status_report(p_migration_files text[], p_heartbeat_fresh interval)
returns jsonb
language sql stable
set search_path = app, pg_temp
as $$
  with ready as (
    select * from app.readiness(p_migration_files, p_heartbeat_fresh)
  ),
  market_sources as (
    select h.name, h.kind, h.demo, h.status, h.lag_seconds, h.last_success_at,
      (select count(*) from jsonb_each_text(coalesce(h.venues, '{}')) v where v.value = 'up')::int as venues_up,
      (select count(*) from jsonb_each_text(coalesce(h.venues, '{}')) v where v.value = 'down')::int as venues_down
    from market.source_health h
    where h.kind in ('simulated', 'exchange') and h.serving
  ),
  fx as (
    select r.time, r.source, s.demo, h.status
    from (select time, source from market.fx_rates order by time desc limit 1) r
    join market.data_sources s on s.name = r.source
    join market.source_health h on h.name = r.source
  ),
  sentiment as (
    select extract(epoch from now() - max(computed_at))::int as age_seconds from market.sentiment_snapshots
  ),
  -- the first half hour after the first migration: what has not run yet is starting, not failing
  install as (
    select min(applied_at) > now() - interval '30 minutes' as recent from app.migrations
  ),
  webhooks as (
    select
      (select count(*) from app.webhook_deliveries where status = 'pending')::int as backlog,
      (select extract(epoch from now() - min(created_at))::int from app.webhook_deliveries where status = 'pending') as oldest_pending_age_seconds,
      count(*) filter (where status = 'succeeded')::int as succeeded_24h,
      count(*) filter (where status = 'failed')::int as failed_24h
    from app.webhook_deliveries
    where created_at > now() - interval '24 hours'
  ),
  emails as (
    select
      (select count(*) from app.email_messages where status = 'pending')::int as backlog,
      (select extract(epoch from now() - min(created_at))::int from app.email_messages where status = 'pending') as oldest_pending_age_seconds,
      count(*) filter (where status = 'delivered')::int as delivered_24h,
      count(*) filter (where status = 'bounced')::int as bounced_24h,
      count(*) filter (where status = 'failed')::int as failed_24h
    from app.email_messages
    where created_at > now() - interval '24 hours'
  ),
  components as (
    select 1 as ord, jsonb_build_object('id', 'database', 'name', 'Database',
      'state', case when cardinality(r.pending) = 0 then 'operational' else 'degraded' end,
      'figures', jsonb_build_object('reachable', true, 'migrations_current', cardinality(r.pending) = 0,
        'pending_migrations', to_jsonb(r.pending))) as component
    from ready r
    union all
    select 2, jsonb_build_object('id', 'worker', 'name', 'Job worker',
      'state', case when r.fresh_workers > 0 then 'operational' else 'degraded' end,
      'figures', jsonb_build_object('fresh_workers', r.fresh_workers, 'workers', r.workers,
        'newest_heartbeat_age_seconds', round(r.newest_beat_age_seconds)))
    from ready r
    union all
    select 3, jsonb_build_object('id', 'source:' || m.name, 'name', 'Market source: ' || m.name,
      'state', case
        when m.status = 'starting' then 'busy'
        when m.lag_seconds > 3600 or (m.venues_up = 0 and m.venues_down > 0) then 'outage'
        when m.status = 'failing' or m.lag_seconds > 300 or m.venues_down > 0 then 'degraded'
        else 'operational' end,
      'figures', jsonb_build_object('kind', m.kind, 'demo', m.demo, 'status', m.status, 'newest_data_age_seconds', m.lag_seconds,
        'last_success_at', m.last_success_at, 'venues_up', m.venues_up, 'venues_down', m.venues_down)
        -- the venues read through a ccxt id never verified on the replay
        || case when m.name = 'exchanges' then jsonb_build_object('unverified_venues', (
          select coalesce(jsonb_agg(e.slug order by e.slug), '[]') from market.exchanges e
          where e.source = 'exchanges' and e.status = 'active' and not e.verified)) else '{}' end)
    from market_sources m
    union all
    -- each active venue's candles (issue 46): how its markets are read, candles per minute by path, index bar delay
    select 3, jsonb_build_object('id', 'venue:' || h.exchange, 'name', 'Venue: ' || h.name,
      'state', case when h.state = 'down' then 'degraded' else 'operational' end,
      'figures', jsonb_build_object('rest', h.state, 'stream', h.stream_state,
        'markets_streamed', h.markets_streamed, 'markets_on_rest_fallback', h.markets_rest_fallback,
        'stream_candles_per_minute', h.candles_per_minute_stream, 'rest_candles_per_minute', h.candles_per_minute_rest,
        'index_bar_delay_p50_seconds', h.index_delay_p50_seconds, 'index_bar_delay_p99_seconds', h.index_delay_p99_seconds))
    from market.venue_health h
    join market.exchanges e on e.slug = h.exchange
    where e.status = 'active'
    union all
    select 4, jsonb_build_object('id', 'fx', 'name', 'FX rates',
      'state', case
        when f.time is null then 'degraded'
        when f.demo then 'operational'
        when f.status = 'failing' or now() - f.time > interval '4 days' then 'degraded'
        else 'operational' end,
      'figures', jsonb_build_object('source', f.source, 'demo', coalesce(f.demo, false),
        'age_seconds', extract(epoch from now() - f.time)::int))
    from (select) one left join fx f on true
    union all
    select 5, jsonb_build_object('id', 'sentiment', 'name', 'Sentiment readings',
      'state', case
        when s.age_seconds is null and i.recent then 'busy'
        when s.age_seconds is null or s.age_seconds > 2700 then 'degraded'
        else 'operational' end,
      'figures', jsonb_build_object('age_seconds', s.age_seconds))
    from sentiment s, install i
    union all
    select 6, jsonb_build_object('id', 'webhooks', 'name', 'Webhook delivery',
      'state', case
        when w.oldest_pending_age_seconds > 3600 then 'degraded'
        when w.succeeded_24h + w.failed_24h >= 10 and w.failed_24h > w.succeeded_24h then 'degraded'
        else 'operational' end,
      'figures', jsonb_build_object('backlog', w.backlog, 'oldest_pending_age_seconds', w.oldest_pending_age_seconds,
        'succeeded_24h', w.succeeded_24h, 'failed_24h', w.failed_24h,
        'failure_rate_24h', case when w.succeeded_24h + w.failed_24h > 0
          then round(w.failed_24h::numeric / (w.succeeded_24h + w.failed_24h), 3) end))
    from webhooks w
    union all
    -- whether e-mail is on at all is the API process's setting (SMTP_URL): src/pages/status.ts adds it
    select 7, jsonb_build_object('id', 'email', 'name', 'E-mail notifications',
      'state', case when e.oldest_pending_age_seconds > 3600 then 'degraded' else 'operational' end,
      'figures', jsonb_build_object('backlog', e.backlog, 'oldest_pending_age_seconds', e.oldest_pending_age_seconds,
        'delivered_24h', e.delivered_24h, 'bounced_24h', e.bounced_24h, 'failed_24h', e.failed_24h))
    from emails e
  )
  select jsonb_agg(c.component order by c.ord, c.component ->> 'id') from components c
$$;
comment on function app.status_report(text[], interval) is
  'The components of GET /status and /status.json with state (operational, busy, degraded, outage) and figures. Thresholds: '
  'database degraded while migrations are pending; job worker degraded without a heartbeat newer than p_heartbeat_fresh; '
  'each serving market source (market.source_health, kind simulated or exchange) busy while its first run writes its history (status starting), degraded when its last run failed, its data is more than 300 s old or a venue is down, '
  'outage when its data is more than 3600 s old or every venue is down (the exchanges source also lists its unverified venues, market.exchanges.verified); each active venue (market.venue_health) degraded while its REST reads back off (state down), with its REST and stream states, markets streamed and on REST fallback, candles per minute by path and the p50/p99 delay from a minute''s close to its index bar; FX rates degraded when none exist, the newest real rate is more than 4 days old '
  '(the ECB publishes on working days) or its source is failing (placeholder demo rates count as operational, labelled demo); '
  'sentiment busy with no reading yet in the first 30 minutes after the first migration, degraded with no reading or one more than 2700 s old (refreshed every 15 minutes); webhook delivery degraded when a delivery has been pending more than 3600 s '
  'or more than half of at least 10 deliveries finished in 24 hours failed; e-mail notifications degraded when an e-mail has been pending more than 3600 s. '
  'The overall state is the worst component state.';
revoke execute on function app.status_report(text[], interval) from public;
