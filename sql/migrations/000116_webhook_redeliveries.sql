-- A delivery may be sent again from the console ("Redeliver"): it goes back to pending with a
-- fresh set of retries (the first attempt and up to 3 retries counted from redelivered_at).
alter table app.webhook_deliveries add column redelivered_at timestamptz;
comment on column app.webhook_deliveries.redelivered_at is
'When the owner last asked for this delivery to be sent again (app.redeliver_webhook); retries are counted from the attempts since. Null: never redelivered.';
