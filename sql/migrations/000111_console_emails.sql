-- The console's e-mails (verification, password reset, invite links) go through the e-mail outbox.
alter table app.email_messages drop constraint email_messages_kind_check;
alter table app.email_messages add constraint email_messages_kind_check
  check (kind in ('alarm.triggered', 'deprecation.notice', 'console.link'));
