-- Browser push (sql/migrations/000130, 000131): the VAPID key pair, the browsers an account
-- subscribed in the console (src/console/push.ts), and the push outbox around each request of
-- jobs/deliver_push.ts, mirroring the e-mail outbox (630): a message and its deliver_push job are
-- written in the transaction that raised it (app.evaluate_alarms for alarm.triggered); an attempt
-- is opened (committed) before the request and closed after it. Rules: 2xx -> delivered (the
-- subscription's last_success_at); 404/410 -> gone, the subscription removed; 5xx, 429, time-out
-- or connection error -> retried after base, 5 x base and 25 x base (app.outbox_retry_at), the 4th
-- failure fails the message; another 4xx -> failed at once. Everything is in app: the analyst role
-- reads none of it.

-- why: concurrent first starts (API and worker processes) must agree on one pair
create or replace function app.push_vapid_keys(p_public_key text, p_private_key text)
returns table (public_key text, private_key text)
language plpgsql
as $$
#variable_conflict use_column
begin
  insert into app.vapid_keys (public_key, private_key) values (p_public_key, p_private_key) on conflict (singleton) do nothing;
  return query select k.public_key, k.private_key from app.vapid_keys k;
end;
$$;
comment on function app.push_vapid_keys(text, text) is
'The stored VAPID key pair (base64url); stores the given candidate pair first when none is stored yet, so the first caller''s pair is everyone''s.';

-- the most browsers one account may subscribe: each trigger sends one push per browser
create or replace function app.push_max_subscriptions() returns int
language sql immutable
as $$ select 20 $$;
comment on function app.push_max_subscriptions() is 'The most browsers one account may subscribe to its alarm notifications.';

create or replace function app.push_subscribe(p_owner text, p_endpoint text, p_p256dh text, p_auth text, p_user_agent text)
returns bigint
language plpgsql
as $$
declare
  v_id bigint;
begin
  -- the service validated these (src/push/subscription.ts: a P-256 point, the endpoint's host); the shapes are checked again here
  if p_endpoint is null or p_endpoint !~ '^https?://[^\s]+$' or length(p_endpoint) > 2000 then
    raise exception 'The endpoint must be an http(s) URL of at most 2000 characters.' using errcode = 'MD422', column = 'endpoint';
  end if;
  if p_p256dh is null or p_p256dh !~ '^[A-Za-z0-9_-]{87}$' then
    raise exception 'The p256dh key must be a P-256 public key (65 bytes, base64url).' using errcode = 'MD422', column = 'p256dh';
  end if;
  if p_auth is null or p_auth !~ '^[A-Za-z0-9_-]{22}$' then
    raise exception 'The auth secret must be 16 bytes (base64url).' using errcode = 'MD422', column = 'auth';
  end if;
  -- one subscription at a time per account, so two tabs cannot pass the limit together
  perform 1 from app.owners o where o.owner = p_owner for update;
  if (select count(*) from app.push_subscriptions s where s.owner = p_owner and s.endpoint <> p_endpoint) >= app.push_max_subscriptions() then
    raise exception 'This account has % browsers subscribed, the most allowed: remove one first.', app.push_max_subscriptions()
      using errcode = 'MD422', column = 'endpoint';
  end if;
  -- the same browser subscribing again (new keys after the VAPID keys changed, say) replaces its row
  insert into app.push_subscriptions as s (owner, endpoint, p256dh, auth, user_agent)
  values (p_owner, p_endpoint, p_p256dh, p_auth, left(coalesce(p_user_agent, ''), 200))
  on conflict (owner, endpoint) do update set p256dh = excluded.p256dh, auth = excluded.auth, user_agent = excluded.user_agent
  returning s.id into v_id;
  return v_id;
end;
$$;
comment on function app.push_subscribe(text, text, text, text, text) is
'Stores a browser''s push subscription for p_owner (endpoint URL, p256dh and auth as base64url, a user-agent label) or renews the keys of the same endpoint; returns its id. '
'A malformed value MD422 (COLUMN names it); more than app.push_max_subscriptions() browsers MD422 on endpoint.';

create or replace function app.push_subscriptions_of(p_owner text)
returns table (id bigint, user_agent text, push_service text, created_at timestamptz, last_success_at timestamptz)
language sql stable
as $$
  select s.id, s.user_agent, substring(s.endpoint from '^https?://([^/:?#]+)'), s.created_at, s.last_success_at
  from app.push_subscriptions s where s.owner = p_owner order by s.id
$$;
comment on function app.push_subscriptions_of(text) is
'The browsers subscribed to p_owner''s alarm notifications, oldest first: user-agent label, the push service''s host (never the endpoint or keys), created, last accepted push.';

create or replace function app.push_unsubscribe(p_owner text, p_id bigint) returns boolean
language sql
as $$
  with removed as (delete from app.push_subscriptions where owner = p_owner and id = p_id returning 1)
  select exists (select from removed)
$$;
comment on function app.push_unsubscribe(text, bigint) is 'Removes a subscribed browser of p_owner (its pending pushes settle as gone); false when p_owner has no such subscription.';

-- why: one place that turns messages into deliver_push jobs (new messages and retries)
create or replace function app.queue_push_job(p_message_id uuid, p_run_at timestamptz default null) returns void
language sql
as $$ select app.queue_outbox_job('deliver_push', json_build_object('message_id', p_message_id), p_run_at) $$;
comment on function app.queue_push_job(uuid, timestamptz) is 'Queues the deliver_push job of a push message in the caller''s transaction, at p_run_at (null: now).';

create or replace function app.queue_push(p_subscription_id bigint, p_kind text, p_data jsonb) returns uuid
language plpgsql
as $$
declare
  v_id uuid;
begin
  insert into app.push_messages (subscription_id, owner, kind, data)
  select s.id, s.owner, p_kind, coalesce(p_data, '{}') from app.push_subscriptions s where s.id = p_subscription_id
  returning id into v_id;
  if v_id is not null then
    perform app.queue_push_job(v_id);
  end if;
  return v_id;
end;
$$;
comment on function app.queue_push(bigint, text, jsonb) is
'Records one push of kind p_kind (alarm.triggered | push.test) to a subscribed browser and queues its deliver_push job, in the caller''s transaction; returns the message id, null when the subscription does not exist.';

-- why: the alarm.triggered push carries what the webhook event and the e-mail do (app.alarm_triggered_event)
create or replace function app.queue_alarm_pushes(p_alarm app.alarms) returns int
language sql
as $$
  select count(app.queue_push(s.id, 'alarm.triggered', app.alarm_triggered_event(p_alarm)))::int
  from app.push_subscriptions s where s.owner = p_alarm.owner
$$;
comment on function app.queue_alarm_pushes(app.alarms) is
'Queues one alarm.triggered push (data: app.alarm_triggered_event) per browser the alarm''s owner subscribed, in the caller''s transaction; returns how many. Called by app.evaluate_alarms.';

create or replace function app.queue_test_push(p_owner text, p_subscription_id bigint) returns uuid
language sql
as $$
  select app.queue_push(s.id, 'push.test', jsonb_build_object('sent_at', market.iso_time(now())))
  from app.push_subscriptions s where s.id = p_subscription_id and s.owner = p_owner
$$;
comment on function app.queue_test_push(text, bigint) is 'Queues a test notification to one browser of p_owner (the console''s "Send a test notification"); null when p_owner has no such subscription.';

create or replace function app.begin_push_attempt(p_message_id uuid)
returns table (attempt_id bigint, attempt int, endpoint text, p256dh text, auth text, kind text, data jsonb, created_at timestamptz)
language plpgsql
as $$
#variable_conflict use_column
declare
  v_message app.push_messages;
  v_subscription app.push_subscriptions;
begin
  select * into v_message from app.push_messages m where m.id = p_message_id for update;
  -- already settled (a duplicate job) or gone: nothing to send
  if not found or v_message.status <> 'pending' then
    return;
  end if;
  select * into v_subscription from app.push_subscriptions s where s.id = v_message.subscription_id;
  if not found then
    update app.push_messages m set status = 'gone', error = 'the browser was unsubscribed before delivery', settled_at = now()
    where m.id = p_message_id;
    return;
  end if;
  -- An attempt still open here belongs to a worker that died mid-request: the push service may
  -- or may not have the message; send it again (a duplicate notification at worst).
  update app.push_attempts a set finished_at = now(), outcome = 'interrupted',
    error = 'the worker stopped before recording the outcome; sent again'
  where a.message_id = p_message_id and a.finished_at is null;
  update app.push_messages m set attempts = m.attempts + 1 where m.id = p_message_id
  returning m.attempts into attempt;
  insert into app.push_attempts (message_id) values (p_message_id) returning id into attempt_id;
  endpoint := v_subscription.endpoint;
  p256dh := v_subscription.p256dh;
  auth := v_subscription.auth;
  kind := v_message.kind;
  data := v_message.data;
  created_at := v_message.created_at;
  return next;
end;
$$;
comment on function app.begin_push_attempt(uuid) is
'Opens the next attempt of a pending push and returns what to send (endpoint, the browser''s keys, kind, data); no row when there is nothing to send '
'(settled, or the subscription is gone: settled as gone). Closes an attempt a dead worker left open as interrupted.';

create or replace function app.finish_push_attempt(
  p_attempt_id bigint, p_response_status int, p_error text, p_duration_ms int, p_retry_base_ms int default 60000
) returns text
language plpgsql
as $$
declare
  v_outcome text := case
    when p_error is null and p_response_status between 200 and 299 then 'delivered'
    when p_response_status in (404, 410) then 'gone'
    when p_response_status between 400 and 499 and p_response_status <> 429 then 'refused'
    else 'failed' end;
  v_attempt app.push_attempts;
  v_message app.push_messages;
  v_failed int;
begin
  update app.push_attempts a set finished_at = now(), outcome = v_outcome, response_status = p_response_status,
    error = left(coalesce(p_error, case when v_outcome <> 'delivered' then 'HTTP ' || p_response_status end), 1000), duration_ms = p_duration_ms
  where a.id = p_attempt_id and a.finished_at is null
  returning * into v_attempt;
  -- already closed as interrupted by a later run of the job: that run owns the message now
  if not found then
    return 'stale';
  end if;
  select * into v_message from app.push_messages m where m.id = v_attempt.message_id for update;
  -- pruned where pushes are settled, per owner, rather than by a job of its own
  delete from app.push_messages m where m.owner = v_message.owner and m.settled_at < now() - app.outbox_retention();
  update app.push_messages m set response_status = p_response_status, error = v_attempt.error where m.id = v_message.id;
  if v_outcome = 'delivered' then
    update app.push_messages m set status = 'delivered', error = null, settled_at = now() where m.id = v_message.id;
    update app.push_subscriptions s set last_success_at = now() where s.id = v_message.subscription_id;
    return 'delivered';
  end if;
  if v_outcome = 'gone' then
    -- the push service no longer knows this browser (unsubscribed, expired): stop pushing to it
    update app.push_messages m set status = 'gone', settled_at = now() where m.id = v_message.id;
    delete from app.push_subscriptions s where s.id = v_message.subscription_id;
    return 'gone';
  end if;
  if v_outcome = 'failed' then
    -- Interrupted attempts do not use up a retry: only failed ones count.
    select count(*) into v_failed from app.push_attempts a where a.message_id = v_message.id and a.outcome = 'failed';
    if app.outbox_retry_at(v_failed, p_retry_base_ms) is not null then
      perform app.queue_push_job(v_message.id, app.outbox_retry_at(v_failed, p_retry_base_ms));
      return 'retry';
    end if;
  end if;
  update app.push_messages m set status = 'failed', settled_at = now() where m.id = v_message.id;
  return 'failed';
end;
$$;
comment on function app.finish_push_attempt(bigint, int, text, int, int) is
'Closes a push attempt: 2xx settles it delivered (the subscription''s last_success_at); 404/410 settles it gone and removes the subscription; '
'5xx, 429, a time-out or connection error (p_error) queues a retry after p_retry_base_ms x 5^(n-1) for failed attempt n < 4 (app.outbox_retry_at), the 4th fails it; '
'another 4xx fails it at once. Drops the owner''s pushes settled longer ago than app.outbox_retention(). Returns delivered | gone | retry | failed | stale.';
