-- Embed widgets have their own monthly quota, separate from the Data API's (the specification):
-- widget keys are a third key scope, with plans of their own. A plan's monthly_quota counts page
-- views, counted when a widget body is sent (a 304 costs none); requests_per_minute is no limit for
-- widgets (a busy page is viewed by many at once): set out of reach; per_page_cap does not apply (kept non-null).
alter table app.plans drop constraint plans_scope_check;
alter table app.plans add constraint plans_scope_check check (scope in ('data-api', 'mcp', 'widget'));
comment on column app.plans.scope is 'Which keys may carry the plan: data-api (/api/v1), mcp (the /mcp tool server) or widget (embeddable widgets at /widgets, quota in page views). Ranks compare within a scope.';
alter table app.api_keys drop constraint api_keys_scope_check;
alter table app.api_keys add constraint api_keys_scope_check check (scope in ('data-api', 'mcp', 'widget'));

insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap, scope) values
  ('widget-free', 1, 50000, 1000000, 1, 'widget'),
  ('widget-pro', 3, 2000000, 1000000, 1, 'widget');
