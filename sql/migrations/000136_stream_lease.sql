-- Exactly one process holds the venues' live streams: a lease row with an expiry that the holder
-- renews every second or so; when it dies, another process takes the lease once it has expired.
create table market.stream_leases (
  name text primary key check (name ~ '^[a-z][a-z0-9_-]{0,40}$'),
  holder text not null check (length(holder) between 1 and 200),
  acquired_at timestamptz not null default now(),
  expires_at timestamptz not null
);
comment on table market.stream_leases is 'Leases of singleton work (the live venue streams: name stream): which process (host:pid:nonce) holds it, since when, and until when unless renewed. Taken and renewed by market.take_stream_lease.';
