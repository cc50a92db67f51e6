-- When a key last called an endpoint, to a few seconds (the admission flush writes it): who called
-- a deprecated route lately (mdapi notify-deprecation) without month-sized guesses.
alter table app.usage_endpoints add column last_called_at timestamptz;
comment on column app.usage_endpoints.last_called_at is
'When the key last called the endpoint in that month (written by each admission flush or admit); null on rows counted before it existed.';
