-- The Alarms group: a key owner's TARGET alarms on coins, scoped by owner (another owner's alarm
-- is not found, MD404), the inventory balance and the instant-trigger guard. Errors of their own,
-- rendered by src/http/errors.ts: MD422 hint alarm_would_trigger, MD422 hint no_current_value,
-- MD409 hint alarm_inventory_exhausted (details from DETAIL); MD422 with COLUMN names the invalid body field;
-- MD422 hints email_not_configured, email_address_missing and push_not_available for a notification
-- the service cannot send.
-- Evaluation after each price refresh: 625_alarm_evaluation.sql.

-- why: the one definition of an alarm metric's current value, shared by the guard and the evaluation
create or replace function app.alarm_metric_value(p_state market.coin_state, p_metric text) returns numeric
language sql immutable
as $$
  select case p_metric
    when 'rate' then p_state.price
    -- volume_24h is 0, not null, for a coin that never traded: without a price it has no value
    when 'volume' then case when p_state.price is not null then p_state.volume_24h end
    when 'marketcap' then p_state.marketcap
  end
$$;
comment on function app.alarm_metric_value(market.coin_state, text) is
'The current value of an alarm metric from a coin_state row: rate = price (USD), volume = volume_24h (null without a price), marketcap. Null: no current value.';

-- why: the one trigger condition, shared by the guard (would it trigger now?) and the evaluation
create or replace function app.alarm_condition_met(p_direction text, p_target numeric, p_value numeric) returns boolean
language sql immutable
as $$
  select case p_direction when 'above' then p_value >= p_target when 'below' then p_value <= p_target end
$$;
comment on function app.alarm_condition_met(text, numeric, numeric) is
'Whether an alarm with this direction and target triggers at p_value: above when p_value >= p_target, below when p_value <= p_target; null when p_value is null.';

-- why: an unknown coin in a request body is a validation error on that field, not a missing resource
create or replace function app.alarm_coin_id(p_slug text) returns int
language plpgsql stable
as $$
begin
  return market.coin_id(p_slug);
exception when sqlstate 'MD404' then
  raise exception 'Unknown coin "%".', p_slug using errcode = 'MD422', column = 'coin';
end;
$$;

-- why: a target arrives as the client's exact decimal text, never through a float
create or replace function app.alarm_target(p_target text) returns numeric
language plpgsql immutable
as $$
declare
  v_target numeric;
begin
  begin
    v_target := p_target::numeric;
  exception when invalid_text_representation or numeric_value_out_of_range then
    v_target := null;
  end;
  if v_target is null or v_target <= 0 or v_target >= 1e20 or scale(v_target) > 30 then
    raise exception 'Must be a positive decimal number below 10^20 with at most 30 decimal places.' using errcode = 'MD422', column = 'target';
  end if;
  return v_target;
end;
$$;

-- why: bars up to the one the guard just compared must never trigger the alarm it let through
create or replace function app.alarm_armed_through(p_coin_id int) returns timestamptz
language sql stable
as $$ select s.last_updated from market.coin_state s where s.coin_id = p_coin_id $$;
comment on function app.alarm_armed_through(int) is 'The start time of the coin''s newest bar (market.coin_state.last_updated): an alarm armed now is compared with later bars only.';

-- why: the instant-trigger guard of create, update and re-arm
create or replace function app.check_alarm_guard(p_coin_id int, p_metric text, p_direction text, p_target numeric) returns void
language plpgsql stable
as $$
declare
  v_value numeric;
begin
  select app.alarm_metric_value(s, p_metric) into v_value from market.coin_state s where s.coin_id = p_coin_id;
  if v_value is null then
    raise exception 'The coin has no current % value, so the alarm could never be evaluated.', p_metric
      using errcode = 'MD422', hint = 'no_current_value', detail = jsonb_build_object('metric', p_metric)::text;
  end if;
  if app.alarm_condition_met(p_direction, p_target, v_value) then
    raise exception 'The alarm would trigger at once: the current % % is already % the target %.',
      p_metric, v_value, case p_direction when 'above' then 'at or above' else 'at or below' end, p_target
      using errcode = 'MD422', hint = 'alarm_would_trigger', detail = jsonb_build_object(
        'metric', p_metric, 'direction', p_direction, 'target', p_target::text, 'current_value', v_value::text)::text;
  end if;
end;
$$;
comment on function app.check_alarm_guard(int, text, text, numeric) is
'Raises MD422 no_current_value (in HINT) when the coin has no current value for p_metric, MD422 alarm_would_trigger when an alarm with this direction and target would trigger at the current value.';

-- why: a notification the service cannot send is refused at creation, never silently dropped.
-- p_channels: what the calling service can send now (webhook always; email with SMTP_URL; push with the console).
create or replace function app.check_alarm_notification(p_owner text, p_notification text, p_channels text[]) returns void
language plpgsql stable
as $$
begin
  if p_notification = 'push' and not ('push' = any (p_channels)) then
    raise exception 'Push notifications need a browser subscription, made in the developer console, which is off on this service; choose email or webhook.'
      using errcode = 'MD422', hint = 'push_not_available', detail = jsonb_build_object('notification', p_notification)::text;
  end if;
  if p_notification = 'push' and not exists (select from app.push_subscriptions s where s.owner = p_owner) then
    raise exception 'Push notifications need a browser subscription: sign in to the developer console, open Account and choose "Notify this browser"; then create the alarm again.'
      using errcode = 'MD422', hint = 'push_not_available', detail = jsonb_build_object('notification', p_notification)::text;
  end if;
  if p_notification = 'email' and not ('email' = any (p_channels)) then
    raise exception 'E-mail is not configured on this service (no SMTP server), so an e-mail alarm would never reach you; choose webhook.'
      using errcode = 'MD422', hint = 'email_not_configured', detail = jsonb_build_object('notification', p_notification)::text;
  end if;
  if p_notification = 'email' and not exists (select from app.owners o where o.owner = p_owner) then
    raise exception 'No e-mail address is on record for this key''s owner; ask the operator to set one (mdapi set-email), or choose webhook.'
      using errcode = 'MD422', hint = 'email_address_missing', detail = jsonb_build_object('notification', p_notification)::text;
  end if;
end;
$$;
comment on function app.check_alarm_notification(text, text, text[]) is
'Raises MD422 push_not_available for push when p_channels lacks it (CONSOLE=off) or p_owner has no subscribed browser (app.push_subscriptions), email_not_configured for email when p_channels lacks it (no SMTP_URL), '
'email_address_missing for email when p_owner has no address in app.owners (codes in HINT).';

-- why: the one shape of an alarm in every response and in the alarm.triggered event
create or replace function app.alarm_json(p_alarm app.alarms) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'id', p_alarm.id, 'type', 'TARGET', 'name', p_alarm.name,
    -- the reference's shape: the coin as {slug, symbol, name}, not its slug alone
    'coin', (select jsonb_build_object('slug', c.slug, 'symbol', c.symbol, 'name', c.name) from market.coins c where c.id = p_alarm.coin_id),
    'metric', p_alarm.metric, 'direction', p_alarm.direction, 'target', p_alarm.target::text,
    'notification', p_alarm.notification, 'status', p_alarm.status,
    'triggered_value', p_alarm.triggered_value::text, 'triggered_at', market.iso_time(p_alarm.triggered_at),
    'created_at', market.iso_time(p_alarm.created_at), 'updated_at', market.iso_time(p_alarm.updated_at))
$$;
comment on function app.alarm_json(app.alarms) is
'An alarm as every Alarms response and the alarm.triggered event show it: {id, type, name, coin {slug, symbol, name}, metric, direction, target (decimal text), notification, status, triggered_value, triggered_at, created_at, updated_at}.';

-- why: every by-id call resolves the alarm the same way, locked for the change that follows
create or replace function app.owned_alarm(p_owner text, p_id bigint) returns app.alarms
language plpgsql
as $$
declare
  v_alarm app.alarms;
begin
  select * into v_alarm from app.alarms where id = p_id and owner = p_owner for update;
  if not found then
    raise exception 'Alarm % does not exist.', p_id using errcode = 'MD404';
  end if;
  return v_alarm;
end;
$$;

-- why: the balance a response reports; an owner without a row yet has the column default, read
-- from the catalog so that the default stays in one place (an operator may alter it)
create or replace function app.alarm_balance(p_owner text) returns int
language sql stable
as $$
  select coalesce(
    (select i.balance from app.alarm_inventory i where i.owner = p_owner),
    (select pg_get_expr(d.adbin, d.adrelid)::int from pg_attrdef d
     join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
     where d.adrelid = 'app.alarm_inventory'::regclass and a.attname = 'balance'))
$$;

create or replace function app.create_alarm(
  p_owner text, p_name text, p_coin text, p_metric text, p_direction text, p_target text, p_notification text,
  p_channels text[] default array['webhook']
) returns jsonb
language plpgsql
as $$
declare
  v_coin_id int := app.alarm_coin_id(p_coin);
  v_target numeric := app.alarm_target(p_target);
  v_balance int;
  v_alarm app.alarms;
begin
  perform app.check_alarm_notification(p_owner, p_notification, p_channels);
  perform app.check_alarm_guard(v_coin_id, p_metric, p_direction, v_target);
  -- The row lock on the owner's balance serialises concurrent creates: it can never go below 0.
  insert into app.alarm_inventory (owner) values (p_owner) on conflict (owner) do nothing;
  update app.alarm_inventory set balance = balance - 1, updated_at = now()
  where owner = p_owner and balance > 0
  returning balance into v_balance;
  if not found then
    raise exception 'The alarm inventory is exhausted: delete an alarm to free one, or ask the operator for more.'
      using errcode = 'MD409', hint = 'alarm_inventory_exhausted', detail = jsonb_build_object('balance', 0)::text;
  end if;
  insert into app.alarms (owner, name, coin_id, metric, direction, target, notification, armed_through)
  values (p_owner, p_name, v_coin_id, p_metric, p_direction, v_target, p_notification, app.alarm_armed_through(v_coin_id))
  returning * into v_alarm;
  return jsonb_build_object('alarm', app.alarm_json(v_alarm), 'balance', v_balance);
end;
$$;
comment on function app.create_alarm(text, text, text, text, text, text, text, text[]) is
'Creates an active alarm of p_owner and takes one from the owner''s inventory; returns {alarm, balance}. p_target is decimal text; p_channels the notifications the service can send (app.check_alarm_notification). '
'Unknown coin or bad target MD422 (column names the field), a notification it cannot send MD422 email_not_configured | email_address_missing | push_not_available, '
'no current value MD422 no_current_value, would trigger at once MD422 alarm_would_trigger, no balance MD409 alarm_inventory_exhausted (codes in HINT). Endpoint: POST /api/v1/alarms.';

create or replace function app.list_alarms(
  p_owner text, p_status text default null, p_direction text default null, p_notification text default null,
  p_page int default 1, p_per_page int default 25
) returns jsonb
language sql stable
as $$
  with matched as (
    select a from app.alarms a
    where a.owner = p_owner
      and (p_status is null or a.status = p_status)
      and (p_direction is null or a.direction = p_direction)
      and (p_notification is null or a.notification = p_notification)
  )
  select jsonb_build_object(
    'total', (select count(*) from matched),
    'balance', app.alarm_balance(p_owner),
    'data', coalesce((
      select jsonb_agg(app.alarm_json(p.a) order by (p.a).id desc)
      from (select m.a from matched m order by (m.a).id desc
            offset (p_page - 1)::bigint * p_per_page limit p_per_page) p), '[]'))
$$;
comment on function app.list_alarms(text, text, text, text, int, int) is
'One page of p_owner''s alarms, newest first, optionally filtered by status, direction and notification: {total, balance, data}. Endpoint: GET /api/v1/alarms.';

create or replace function app.get_alarm(p_owner text, p_id bigint) returns jsonb
language sql stable
as $$
  select app.alarm_json(a) from app.alarms a where a.id = p_id and a.owner = p_owner
$$;
comment on function app.get_alarm(text, bigint) is 'One alarm of p_owner, or null. Endpoint: GET /api/v1/alarms/{id}.';

create or replace function app.update_alarm(p_owner text, p_id bigint, p_changes jsonb, p_channels text[] default array['webhook']) returns jsonb
language plpgsql
as $$
declare
  v_old app.alarms := app.owned_alarm(p_owner, p_id);
  v_new app.alarms := v_old;
begin
  if p_changes ? 'name' then v_new.name := p_changes ->> 'name'; end if;
  if p_changes ? 'coin' then v_new.coin_id := app.alarm_coin_id(p_changes ->> 'coin'); end if;
  if p_changes ? 'metric' then v_new.metric := p_changes ->> 'metric'; end if;
  if p_changes ? 'direction' then v_new.direction := p_changes ->> 'direction'; end if;
  if p_changes ? 'target' then v_new.target := app.alarm_target(p_changes ->> 'target'); end if;
  if p_changes ? 'notification' then v_new.notification := p_changes ->> 'notification'; end if;
  -- a change of channel only: an alarm that already e-mails keeps doing so while its name changes
  if v_new.notification is distinct from v_old.notification then
    perform app.check_alarm_notification(p_owner, v_new.notification, p_channels);
  end if;
  if p_changes ->> 'status' = 'active' then
    v_new.status := 'active';
    v_new.triggered_value := null;
    v_new.triggered_at := null;
  elsif p_changes ? 'status' then
    raise exception 'Only "active" may be set: an alarm becomes triggered by itself.' using errcode = 'MD422', column = 'status';
  end if;
  -- An active alarm whose condition changed (or that was re-armed) must not trigger at once.
  if v_new.status = 'active' and (v_new.status, v_new.coin_id, v_new.metric, v_new.direction, v_new.target)
      is distinct from (v_old.status, v_old.coin_id, v_old.metric, v_old.direction, v_old.target) then
    perform app.check_alarm_guard(v_new.coin_id, v_new.metric, v_new.direction, v_new.target);
    v_new.armed_through := app.alarm_armed_through(v_new.coin_id);
  end if;
  update app.alarms set
    name = v_new.name, coin_id = v_new.coin_id, metric = v_new.metric, direction = v_new.direction,
    target = v_new.target, notification = v_new.notification, status = v_new.status,
    triggered_value = v_new.triggered_value, triggered_at = v_new.triggered_at, armed_through = v_new.armed_through, updated_at = now()
  where id = p_id
  returning * into v_new;
  return app.alarm_json(v_new);
end;
$$;
comment on function app.update_alarm(text, bigint, jsonb, text[]) is
'Changes the fields present in p_changes (name, coin, metric, direction, target as decimal text, notification; status "active" re-arms a triggered alarm). '
'A changed notification must be one the service can send (p_channels, app.check_alarm_notification). '
'The guard re-applies when the result is active and its condition changed or it was re-armed. Not p_owner''s: MD404. Endpoint: PATCH /api/v1/alarms/{id}.';

create or replace function app.delete_alarm(p_owner text, p_id bigint) returns jsonb
language plpgsql
as $$
declare
  v_alarm app.alarms := app.owned_alarm(p_owner, p_id);
  v_balance int;
begin
  delete from app.alarms where id = v_alarm.id;
  insert into app.alarm_inventory as i (owner) values (p_owner)
  on conflict (owner) do update set balance = i.balance + 1, updated_at = now()
  returning balance into v_balance;
  return jsonb_build_object('deleted', true, 'balance', v_balance);
end;
$$;
comment on function app.delete_alarm(text, bigint) is
'Deletes an alarm of p_owner (active or triggered) and returns one to the owner''s inventory: {deleted, balance}. Not p_owner''s: MD404. Endpoint: DELETE /api/v1/alarms/{id}.';
