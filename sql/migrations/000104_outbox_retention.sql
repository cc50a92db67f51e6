-- The webhook outbox's retention became the retention of both outboxes (app.outbox_retention in
-- sql/functions/595_outbox.sql): the webhook-only name goes.
drop function if exists app.webhook_delivery_retention();
