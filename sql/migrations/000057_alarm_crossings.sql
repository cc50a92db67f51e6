-- A price can pass a target and come back between two refreshes: the minute bar's high or low shows
-- it while its close does not. Rate alarms therefore also compare the bars since they were last
-- compared: since the alarm was armed, and since the previous evaluation (a watermark per coin).
alter table app.alarms add column armed_through timestamptz;
comment on column app.alarms.armed_through is
'Start time of the coin''s newest bar when the alarm was created, re-armed or its condition changed (the guard compared its close): '
'only later bars can trigger a rate alarm by their high or low. Null: the current value only.';

create table app.alarm_watermarks (
  coin_id int primary key,
  through timestamptz not null
);
comment on table app.alarm_watermarks is
'Per coin with active rate alarms, the start time of the newest minute bar app.evaluate_alarms has compared; the next evaluation reads only later bars.';
