-- Alarm inventory: how many more alarms each key owner may hold. Creating an alarm takes one,
-- deleting one gives it back (see app.create_alarm / app.delete_alarm). Owners are API-key
-- owners, so the table lives in app, never readable by the analyst role.
create table app.alarm_inventory (
  owner text primary key,
  -- a new owner's row is created on their first alarm with this default: 10 alarms
  balance int not null default 10 check (balance >= 0),
  updated_at timestamptz not null default now()
);
comment on table app.alarm_inventory is
'Alarm inventory per key owner: balance = alarms the owner may still create. A new owner starts with 10 (the column default, '
'applied on their first create). Create takes one, delete returns one. Operators raise it with SQL, e.g. '
'insert into app.alarm_inventory (owner, balance) values (''acme'', 50) on conflict (owner) do update set balance = app.alarm_inventory.balance + 40.';
