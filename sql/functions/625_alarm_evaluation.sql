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

-- why: a minute's bar can be built again after it was compared (a venue's late candle, its REST
-- candle over a stream one): its new high or low must be compared too, or a crossing is missed
create or replace function app.rewind_alarm_watermarks(p_now timestamptz default now()) returns int
language sql volatile
as $$
  with changed as (
    select c.coin_id, min(c.time) as first
    from market.coin_state_changes c
    where c.time <= p_now and c.coin_id in (select w.coin_id from app.alarm_watermarks w)
    group by c.coin_id
  ),
  rewound as (
    update app.alarm_watermarks w set through = x.first - interval '1 microsecond'
    from changed x
    where w.coin_id = x.coin_id and x.first <= w.through
    returning 1
  )
  select count(*)::int from rewound;
$$;
comment on function app.rewind_alarm_watermarks(timestamptz) is
'Moves a coin''s alarm watermark (app.alarm_watermarks) back to just before its earliest minute bar written or changed since the coin state last read the bars (market.coin_state_changes, up to p_now), when that bar is at or before the watermark, so that the next app.evaluate_alarms compares the bar''s new high and low with the rate alarms'' targets. Called by market.refresh_coin_state_timed before the coin state consumes the changes. Returns the watermarks moved.';
revoke execute on function app.rewind_alarm_watermarks(timestamptz) from public;

create or replace function app.evaluate_alarms() returns table (triggered int, deliveries int, emails int, pushes int)
language plpgsql volatile
as $$
begin
  -- Evaluations take turns: the second sees the first's triggers and watermarks once it commits
  -- (the row locks below would keep an alarm from triggering twice anyway).
  perform pg_advisory_xact_lock(hashtext('app.evaluate_alarms'));
  return query
  with due as (
    -- Locks in id order (no deadlock between two evaluations). Triggered by the current value, or,
    -- for a rate alarm, by a bar's high (above) or low (below) since the alarm was armed and since
    -- the previous evaluation: a target passed between two refreshes still counts.
    select a.id, case when app.alarm_condition_met(a.direction, a.target, v.value) then v.value else x.extreme end as value
    from app.alarms a
    join market.coin_state s on s.coin_id = a.coin_id
    left join app.alarm_watermarks w on w.coin_id = a.coin_id
    cross join lateral (select app.alarm_metric_value(s, a.metric) as value) v
    left join lateral (
      select case a.direction when 'above' then max(b.high) else min(b.low) end as extreme
      from market.coin_bars_1m b
      where a.metric = 'rate' and b.coin_id = a.coin_id
        and b.time > greatest(a.armed_through, w.through) and b.time <= s.last_updated
    ) x on true
    where a.status = 'active'
      and (app.alarm_condition_met(a.direction, a.target, v.value) or app.alarm_condition_met(a.direction, a.target, x.extreme))
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
  -- Webhook alarms raise an event to the owner's endpoints, e-mail alarms queue one e-mail, push
  -- alarms one push per subscribed browser (none left: the trigger is recorded on the alarm only).
  select count(*)::int,
    coalesce(sum(case when (f.a).notification = 'webhook'
      then app.enqueue_webhook_event((f.a).owner, 'alarm.triggered', app.alarm_triggered_event(f.a)) else 0 end), 0)::int,
    coalesce(sum(case when (f.a).notification = 'email' then app.queue_alarm_email(f.a) else 0 end), 0)::int,
    coalesce(sum(case when (f.a).notification = 'push' then app.queue_alarm_pushes(f.a) else 0 end), 0)::int
  from fired f;

  -- the bars compared above are not read again
  insert into app.alarm_watermarks as m (coin_id, through)
  select s.coin_id, s.last_updated
  from market.coin_state s
  where s.last_updated is not null
    and s.coin_id in (select a.coin_id from app.alarms a where a.status = 'active' and a.metric = 'rate')
  on conflict (coin_id) do update set through = greatest(m.through, excluded.through);
end;
$$;
comment on function app.evaluate_alarms() is
'Triggers every active alarm whose condition (above: value >= target, below: value <= target) is met by market.coin_state now, '
'or, for a rate alarm, by the high (above) or low (below) of a minute bar newer than both the alarm''s armed_through and the coin''s watermark (app.alarm_watermarks): '
'status triggered, triggered_value (the current value, else that extreme), triggered_at, and for notification webhook one alarm.triggered event per delivering endpoint of the owner '
'(app.enqueue_webhook_event), for notification email one alarm.triggered e-mail (app.queue_alarm_email), for notification push one push per subscribed browser (app.queue_alarm_pushes), '
'all in the caller''s transaction; then advances the watermarks. '
'Evaluations take turns (advisory transaction lock). Returns (alarms triggered, webhook deliveries queued, e-mails queued, pushes queued). Called by market.refresh_coin_state.';
