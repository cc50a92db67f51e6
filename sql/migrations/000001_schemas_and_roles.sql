-- The three schemas of the design and the analyst role that reads two of them.
create extension if not exists timescaledb;

create schema if not exists market;
comment on schema market is 'Market data: coins, candles, exchanges, tickers, FX, sentiment, curated content. Readable by analysts.';
create schema if not exists api;
comment on schema api is 'The functions and views the HTTP API calls, one family per endpoint group. Readable by analysts: select * from api.<function>(...) returns what the endpoint returns.';
create schema if not exists app;
comment on schema app is 'Service internals: API keys (hashed), plans, usage counters, alarms, webhooks. Never readable by analysts.';

do $$
begin
  if not exists (select from pg_roles where rolname = 'analyst') then
    create role analyst login;
  end if;
end $$;
comment on role analyst is 'Read-only role for analysts: schemas market and api, nothing in app.';

revoke all on schema app from public;
grant usage on schema market, api to analyst;
alter default privileges in schema market grant select on tables to analyst;
alter default privileges in schema api grant select on tables to analyst;
alter default privileges in schema api grant execute on functions to analyst;
-- Functions are executable by PUBLIC by default; nothing in app should be.
alter default privileges in schema app revoke execute on functions from public;
