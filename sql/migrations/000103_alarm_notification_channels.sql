-- app.create_alarm and app.update_alarm take the notification channels the calling service can
-- send (e-mail only with SMTP configured), and app.evaluate_alarms also returns the e-mails it
-- queued: the old signatures go, the function files create the new ones.
drop function if exists app.create_alarm(text, text, text, text, text, text, text);
drop function if exists app.update_alarm(text, bigint, jsonb);
drop function if exists app.evaluate_alarms();
