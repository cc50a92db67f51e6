-- Source health: every run of a source records its outcome here (src/sources/source.ts), and
-- /ping, /readyz and analysts read it through market.source_health.

create or replace function market.record_source_run(p_name text, p_error text default null, p_venues jsonb default null) returns void
language sql volatile
as $$
  update market.data_sources s set
    last_run_at = now(),
    last_success_at = case when p_error is null then now() else s.last_success_at end,
    last_error = coalesce(p_error, s.last_error),
    last_error_at = case when p_error is not null then now() else s.last_error_at end,
    venues = coalesce(p_venues, s.venues)
  where s.name = p_name;
$$;
comment on function market.record_source_run(text, text, jsonb) is 'Records one run of a data source: success (p_error null) or its error, and the venues up and down when the source has several.';
revoke execute on function market.record_source_run(text, text, jsonb) from public;

create or replace view market.source_health as
select s.name, s.kind, s.demo, s.description, s.last_run_at, s.last_success_at, s.last_error, s.last_error_at,
  -- how far behind the source's data is: its coverage where it keeps one, else its last success
  extract(epoch from now() - coalesce(s.covered_until, s.last_success_at))::int as lag_seconds,
  case
    -- no run has ended yet, but data is arriving: the first run is writing its history
    when s.last_run_at is null and s.kind <> 'import' and s.covered_until is not null then 'starting'
    when s.last_run_at is null then 'idle'
    when s.last_error_at is not null and s.last_error_at >= coalesce(s.last_success_at, '-infinity') then 'failing'
    -- a source of several venues whose run ended without an error but with no venue producing data failed all the same
    when jsonb_typeof(s.venues) = 'object' and s.venues <> '{}'
      and not exists (select from jsonb_each_text(s.venues) v where v.value = 'up') then 'failing'
    when exists (select from jsonb_each_text(coalesce(s.venues, '{}')) v where v.value <> 'up') then 'degraded'
    else 'ok'
  end as status,
  s.venues,
  case
    -- placeholder reference data (the seeded FX rates) is served until a real reference source has succeeded
    when s.demo and s.kind = 'reference' then not exists (
      select from market.data_sources o where o.kind = s.kind and not o.demo and o.last_success_at is not null)
    else s.kind = 'import' or s.last_run_at is not null or s.covered_until is not null
  end as serving
from market.data_sources s;
comment on view market.source_health is 'Each data source''s health: last run, last success, last error, lag in seconds (now minus its coverage, else its last success), status (idle: never ran; starting: its first run is still writing its history; failing: its last run failed, or no venue of a several-venue source produced data in it; degraded: some venues did not; ok), venues up/down, and serving: whether its data is what the API serves (a source that has run or written data; seeded placeholder reference data until a real reference source has succeeded).';
