-- A widget key is an app.api_keys row of scope 'widget' (looked up by its hash, admitted, counted
-- and revoked as every key is) with what only widget keys have: the publishable key itself, which
-- sits in the page source of every site that embeds it and so is no secret (the console shows it
-- again in the widget builder), and the origins allowed to embed it.
create table app.widget_keys (
  key_id bigint primary key references app.api_keys (id) on delete cascade,
  publishable_key text not null unique check (publishable_key ~ '^mdw_[A-Za-z0-9_-]{20,64}$'),
  allowed_origins text[] not null check (cardinality(allowed_origins) between 1 and 20)
);
comment on table app.widget_keys is 'Widget keys (app.api_keys rows of scope widget): the publishable key, shown in the console as often as asked since it is public in every embedding page, and the origins allowed to embed the widgets.';
comment on column app.widget_keys.key_id is 'The app.api_keys row: hash, owner, plan, revocation and counters.';
comment on column app.widget_keys.publishable_key is 'The key itself (mdw_…): publishable, safe in page source; requests are still looked up by its hash in app.api_keys.';
comment on column app.widget_keys.allowed_origins is 'The origins (scheme://host[:port], https, or http for loopback only) whose pages may show the widgets: checked against Origin or Referer and sent as frame-ancestors.';
