-- The health of each data source, written by every run of it (src/sources/source.ts): when it
-- last ran and succeeded, its last error, and for sources with several venues which are up.
alter table market.data_sources
  add column last_run_at timestamptz,
  add column last_success_at timestamptz,
  add column last_error text,
  add column last_error_at timestamptz,
  add column venues jsonb;
comment on column market.data_sources.last_run_at is 'When the source last ran (its job), successfully or not.';
comment on column market.data_sources.last_success_at is 'When a run of the source last succeeded.';
comment on column market.data_sources.last_error is 'The error of the last failed run (kept after later successes; compare last_error_at with last_success_at).';
comment on column market.data_sources.last_error_at is 'When a run of the source last failed.';
comment on column market.data_sources.venues is 'For a source with several venues: {venue: "up" | "down"} as of its last run; null otherwise.';
