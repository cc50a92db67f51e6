-- Price alarms (type TARGET, on coins): a key owner's alarm triggers once when a coin's metric
-- reaches its target. States: active -> triggered (by app.evaluate_alarms after a price refresh);
-- a triggered alarm is no longer evaluated until PATCH sets it active again (the guard re-applies).
create table app.alarms (
  id bigint generated always as identity primary key,
  owner text not null,
  name text not null check (length(name) between 1 and 255),
  -- no cascade: deleting a coin must not silently drop alarms (and their inventory)
  coin_id int not null references market.coins (id),
  metric text not null check (metric in ('rate', 'volume', 'marketcap')),
  direction text not null check (direction in ('above', 'below')),
  target numeric not null check (target > 0),
  notification text not null check (notification in ('email', 'push', 'webhook')),
  status text not null default 'active' check (status in ('active', 'triggered')),
  -- the metric value that triggered it and when; null while active
  triggered_value numeric,
  triggered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((status = 'triggered') = (triggered_at is not null))
);
create index alarms_owner on app.alarms (owner, id desc);
-- evaluation reads only active alarms, by coin
create index alarms_active_coin on app.alarms (coin_id) where status = 'active';
comment on table app.alarms is
'Price alarms of key owners (type TARGET). metric: rate = the coin''s current USD price, volume = 24h USD volume, marketcap = marketcap, '
'all from market.coin_state. direction above triggers when the value is >= target, below when <= target. '
'status active -> triggered (app.evaluate_alarms, once); triggered alarms are not evaluated until re-armed with PATCH status=active.';
