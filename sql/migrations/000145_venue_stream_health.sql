-- A venue's live stream health (issue 43), kept apart from its REST health: the stream holder's
-- connection failures and their back-off never reset, and are never reset by, the failures of
-- the REST requests (the minute job, the backfill, liquidations, the holder's own resynchronising
-- reads), which stay in failures/backoff_until. The REST recorder takes the gate's clock now
-- (p_at), so the old four-argument form goes (sql/functions/415_exchange_venues.sql makes the new one).
alter table market.venue_status
  add column stream_failures int not null default 0 check (stream_failures >= 0),
  add column stream_backoff_until timestamptz,
  add column stream_up_since timestamptz,
  add column stream_attempts bigint not null default 0 check (stream_attempts >= 0),
  add column stream_last_error text,
  add column stream_last_error_at timestamptz;
comment on column market.venue_status.stream_failures is 'Consecutive failed live stream connections (a stream that stayed up a minute starts the count again); the stream back-off doubles with each.';
comment on column market.venue_status.stream_backoff_until is 'Until when the stream holder waits before connecting to the venue''s stream again (exponential back-off with jitter: 2 s doubling up to 5 minutes).';
comment on column market.venue_status.stream_up_since is 'When the current stream connection was subscribed and resynchronised; null while it is down.';
comment on column market.venue_status.stream_attempts is 'Live stream connections attempted since the venue was added, successful or not.';
comment on column market.venue_status.stream_last_error is 'Why the last stream connection failed or ended.';
comment on column market.venue_status.stream_last_error_at is 'When the last stream connection failed or ended.';

drop function if exists market.record_venue_run(text, int, text, int);
