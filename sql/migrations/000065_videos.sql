-- Editorial videos (hosted elsewhere, e.g. YouTube), identified by the id their content file gives.
create table market.videos (
  id int primary key check (id > 0),
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'DRAFT', 'ARCHIVED')),
  type text not null check (type in ('overview', 'tutorial', 'explainer', 'review', 'analysis', 'news')),
  title text not null check (length(title) between 1 and 300),
  description text,
  url text not null check (url ~ '^https?://'),
  thumbnail text check (thumbnail ~ '^https?://'),
  duration_seconds int check (duration_seconds > 0),
  channel text check (length(channel) <= 200),
  published_at timestamptz not null,
  views bigint not null default 0 check (views >= 0),
  source text not null references market.data_sources (name)
);
create index videos_published on market.videos (published_at desc, id desc) where status = 'ACTIVE';
comment on table market.videos is 'Editorial videos (curated content, mdapi import-content), in one language. Served only when ACTIVE and published; related coins, exchanges and wallets are in market.content_entities.';
comment on column market.videos.id is 'Stable id from the content file (GET /videos/{id}).';
comment on column market.videos.type is 'overview, tutorial, explainer, review, analysis or news (the type filter of /coins/{slug}/videos).';
comment on column market.videos.views is 'Plays counted by the web front end. API reads never change it; an import never overwrites it.';
