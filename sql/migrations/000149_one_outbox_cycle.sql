-- One outbox cycle (sql/functions/595_outbox.sql: app.begin_outbox_attempt, app.finish_outbox_attempt)
-- replaces each channel's own attempt bookkeeping: the per-channel functions go, and with them the
-- webhook pruning the cycle now does for every channel.
drop function if exists app.begin_webhook_attempt(bigint);
drop function if exists app.finish_webhook_attempt(bigint, int, int, text, int, text);
drop function if exists app.prune_webhook_deliveries(bigint);
drop function if exists app.begin_email_attempt(uuid);
drop function if exists app.finish_email_attempt(bigint, text, int, text, int, int);
drop function if exists app.begin_push_attempt(uuid);
drop function if exists app.finish_push_attempt(bigint, int, text, int, int);
