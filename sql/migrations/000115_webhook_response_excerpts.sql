-- The delivery log shows what the receiver answered: the first bytes of each attempt's response
-- body (src/webhooks/post.ts reads at most RESPONSE_EXCERPT_BYTES, invalid UTF-8 and NULs replaced),
-- stored by app.finish_webhook_attempt, which takes it as a sixth argument now.
alter table app.webhook_attempts add column response_excerpt text
  constraint webhook_attempts_response_excerpt_bound check (char_length(response_excerpt) <= 1000);
comment on column app.webhook_attempts.response_excerpt is
'The first 1 000 bytes of the receiver''s response body as text (invalid UTF-8 and NUL bytes replaced by U+FFFD); null when no response arrived. Shown in the delivery log, escaped.';
drop function if exists app.finish_webhook_attempt(bigint, int, int, text, int);
