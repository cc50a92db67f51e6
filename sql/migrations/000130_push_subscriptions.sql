-- Browser push (RFC 8030 delivery, RFC 8291 encryption, RFC 8292 VAPID): the service's VAPID key
-- pair, made once on first start (src/push/vapid.ts) unless VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY are
-- given, and the browsers each account subscribed in the console. In app: the analyst role reads
-- none of it (the private key and each subscription's auth secret are secrets).

create table app.vapid_keys (
  -- one row: the service's pair
  singleton boolean primary key default true check (singleton),
  -- base64url without padding: the uncompressed P-256 point (65 bytes) and the private scalar (32 bytes)
  public_key text not null check (public_key ~ '^[A-Za-z0-9_-]{87}$'),
  private_key text not null check (private_key ~ '^[A-Za-z0-9_-]{43}$'),
  created_at timestamptz not null default now()
);
comment on table app.vapid_keys is
'The service''s VAPID key pair (RFC 8292), made on first start when VAPID_PUBLIC_KEY/VAPID_PRIVATE_KEY are not set; deleting the row makes a new pair at the next start (every browser must subscribe again). Service only.';

create table app.push_subscriptions (
  id bigint generated always as identity primary key,
  owner text not null references app.owners (owner) on delete cascade,
  -- the push service's URL for this browser (a capability: whoever knows it may post to it)
  endpoint text not null check (length(endpoint) <= 2000),
  -- base64url without padding: the browser's P-256 public key (65 bytes) and auth secret (16 bytes)
  p256dh text not null check (p256dh ~ '^[A-Za-z0-9_-]{87}$'),
  auth text not null check (auth ~ '^[A-Za-z0-9_-]{22}$'),
  -- a label for the list in the console (the browser's User-Agent, shortened)
  user_agent text not null default '' check (length(user_agent) <= 200),
  created_at timestamptz not null default now(),
  -- the last push the push service accepted (2xx)
  last_success_at timestamptz,
  unique (owner, endpoint)
);
comment on table app.push_subscriptions is
'Browsers subscribed to an account''s alarm notifications in the console: the push endpoint, the browser''s keys, a user-agent label, created, last accepted push. '
'Removed by the account, or when the push service answers 404/410. Service only.';
