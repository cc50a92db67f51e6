-- Where market data comes from. A row per source that has written data, so that anyone reading
-- the data (the API's ping, an analyst) can tell a simulated demo market from real feeds.
create table market.data_sources (
  name text primary key check (name ~ '^[a-z][a-z0-9_-]*$'),
  kind text not null check (kind in ('simulated', 'exchange', 'reference', 'import')),
  demo boolean not null default false,
  description text not null,
  settings jsonb not null default '{}',
  covered_until timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table market.data_sources is 'Sources of market data (simulated demo market, exchanges, FX references, CSV imports). demo = true marks made-up data that must be labelled as such.';
comment on column market.data_sources.kind is 'simulated (deterministic demo market), exchange (live venues), reference (e.g. ECB FX rates) or import (CSV history).';
comment on column market.data_sources.demo is 'True when the data is made up for demonstration (the simulated market): API responses and docs must say so.';
comment on column market.data_sources.settings is 'Source parameters, e.g. the seed and anchor time of the simulated market.';
comment on column market.data_sources.covered_until is 'Bars with a start time before this instant have been delivered by the source (exclusive upper bound of its continuous coverage).';
