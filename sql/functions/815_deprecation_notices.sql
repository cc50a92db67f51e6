-- Deprecation notices by e-mail (mdapi notify-deprecation, docs/versioning.md): one notice per key
-- holder who called a deprecated route in the last 90 days, recorded in app.deprecation_notices
-- and queued in the e-mail outbox (630_email_outbox.sql) in one transaction, never twice.

-- why: "called lately" from the per-endpoint counters; rows from before last_called_at existed
-- count by their month
create or replace function app.recent_endpoint_callers(p_endpoint text, p_within interval default interval '90 days')
returns table (owner text, last_called_at timestamptz)
language sql stable
as $$
  -- a row from before last_called_at: at the latest the end of its month, never later than now
  select k.owner, max(coalesce(e.last_called_at, least((e.month + interval '1 month')::timestamptz, now())))
  from app.usage_endpoints e
  join app.api_keys k on k.id = e.key_id
  where e.endpoint = p_endpoint
    and e.month >= date_trunc('month', now() - p_within)::date
    and (e.last_called_at > now() - p_within or e.last_called_at is null)
  group by k.owner
$$;
comment on function app.recent_endpoint_callers(text, interval) is
'Owners whose keys called p_endpoint (as app.usage_endpoints names it, e.g. ''GET /api/v1/coins/{id}'') within p_within, with their latest call.';

create or replace function app.queue_deprecation_notices(p_endpoint text, p_sunset date, p_changelog text)
returns table (owner text, status text)
language plpgsql
as $$
#variable_conflict use_column
begin
  -- Two runs at once take turns: the second sees the first's notices and sends none of them again.
  perform pg_advisory_xact_lock(hashtext('app.queue_deprecation_notices'));
  return query
  with callers as (
    select c.owner, c.last_called_at, o.email
    from app.recent_endpoint_callers(p_endpoint) c
    left join app.owners o on o.owner = c.owner
  ),
  queued as (
    -- app.queue_email runs only for the rows that pass the filter: callers with an address and no notice yet
    insert into app.deprecation_notices (owner, endpoint, sunset, changelog, recipient, message_id)
    select c.owner, p_endpoint, p_sunset, p_changelog, c.email,
      app.queue_email(c.owner, 'deprecation.notice', jsonb_build_object(
        'endpoint', p_endpoint, 'sunset', p_sunset::text, 'changelog', p_changelog,
        'last_called_at', market.iso_time(c.last_called_at)))
    from callers c
    where c.email is not null
      and not exists (select from app.deprecation_notices n where n.owner = c.owner and n.endpoint = p_endpoint and n.sunset = p_sunset)
    returning owner
  )
  select c.owner, case
      when c.owner in (select q.owner from queued q) then 'queued'
      when c.email is null then 'no_address'
      else 'already_notified' end
  from callers c
  order by c.owner;
end;
$$;
comment on function app.queue_deprecation_notices(text, date, text) is
'For a deprecated endpoint and its sunset date: records and queues one deprecation.notice e-mail per owner who called it in the last 90 days (app.recent_endpoint_callers) '
'and has an address, unless that owner was already notified of this endpoint and sunset. Returns each recent caller with queued | already_notified | no_address.';
