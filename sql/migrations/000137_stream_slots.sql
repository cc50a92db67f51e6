-- The concurrent live streams of a key across API processes: each process keeps a row per key
-- with how many streams it has open, renewed while it runs; a process that dies stops renewing
-- and its rows stop counting once they expire (app.claim_stream_slot counts only unexpired rows).
create table app.stream_slots (
  key_id bigint not null references app.api_keys (id) on delete cascade,
  process text not null check (length(process) between 1 and 200),
  streams int not null check (streams >= 0),
  expires_at timestamptz not null,
  primary key (key_id, process)
);
comment on table app.stream_slots is 'Live streams (SSE and WebSocket) open per key and API process (host:pid:nonce), so the per-plan concurrent limit (STREAM_CONNECTIONS) holds across processes; a row counts until expires_at, which its process renews while it runs (app.renew_stream_slots), so a dead process''s streams stop counting within STREAM_LEASE_SECONDS.';
