-- Alarm evaluation, set-based, in the transaction of each price refresh (market.refresh_coin_state
-- calls it last): every active alarm whose condition is met by the coin's current value triggers,
-- and its alarm.triggered event is recorded and queued in the same statement. A crash or rollback
-- therefore loses both or neither, and an alarm triggers once: its row is locked and re-checked.

-- why: the body of alarm.triggered, documented in the README
create or replace function app.alarm_triggered_event(p_alarm app.alarms) returns jsonb
language sql stable
as $$
  select jsonb_build_object(
    'alarm', app.alarm_json(p_alarm),
    'coin', (select jsonb_build_object('id', c.id, 'slug', c.slug, 'name', c.name, 'symbol', c.symbol)
             from market.coins c where c.id = p_alarm.coin_id),
    'metric', p_alarm.metric, 'direction', p_alarm.direction, 'target', p_alarm.target::text,
    'value', p_alarm.triggered_value::text, 'triggered_at', market.iso_time(p_alarm.triggered_at))
$$;
comment on function app.alarm_triggered_event(app.alarms) is
'The data of an alarm.triggered event: {alarm (as the API shows it), coin {id, slug, name, symbol}, metric, direction, target, value (the value that triggered it, decimal string), triggered_at}.';

create or replace function app.evaluate_alarms() returns table (triggered int, deliveries int)
language sql volatile
as $$
  with due as (
    -- Locks in id order (no deadlock between two evaluations). A second evaluation running
    -- concurrently waits here, then re-checks the committed row, no longer active, and skips it.
    select a.id, app.alarm_metric_value(s, a.metric) as value
    from app.alarms a
    join market.coin_state s on s.coin_id = a.coin_id
    where a.status = 'active' and app.alarm_condition_met(a.direction, a.target, app.alarm_metric_value(s, a.metric))
    order by a.id
    for update of a
  ),
  fired as (
    update app.alarms a
    set status = 'triggered', triggered_value = d.value, triggered_at = now(), updated_at = now()
    from due d
    where a.id = d.id
    returning a
  )
  -- Only webhook alarms raise an event: email and push have no sender in this service; their
  -- trigger is recorded on the alarm (status, triggered_value, triggered_at) and nothing is sent.
  select count(*)::int,
    coalesce(sum(case when (f.a).notification = 'webhook'
      then app.enqueue_webhook_event((f.a).owner, 'alarm.triggered', app.alarm_triggered_event(f.a)) else 0 end), 0)::int
  from fired f
$$;
comment on function app.evaluate_alarms() is
'Triggers every active alarm whose condition (above: value >= target, below: value <= target) is met by market.coin_state now: '
'status triggered, triggered_value, triggered_at, and for notification webhook one alarm.triggered event per delivering endpoint of the owner '
'(app.enqueue_webhook_event), all in the caller''s transaction. Returns (alarms triggered, deliveries queued). Called by market.refresh_coin_state.';
