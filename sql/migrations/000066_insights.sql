-- Editorial insights: short, dated market observations (about one asset, the market, or a
-- narrative), with per-locale translations and English as the per-field fallback.
create table market.insights (
  id int primary key check (id > 0),
  status text not null default 'ACTIVE' check (status in ('ACTIVE', 'DRAFT', 'ARCHIVED')),
  type text not null check (type in ('per_asset', 'market_overview', 'narrative')),
  sentiment text check (sentiment in ('bullish', 'bearish', 'neutral')),
  first_reported_at timestamptz not null,
  last_updated_at timestamptz not null,
  views bigint not null default 0 check (views >= 0),
  source text not null references market.data_sources (name),
  check (last_updated_at >= first_reported_at)
);
create index insights_first_reported on market.insights (first_reported_at desc, id desc) where status = 'ACTIVE';
comment on table market.insights is 'Editorial insights (curated content, mdapi import-content): per_asset, market_overview or narrative observations, dated. Served only when ACTIVE and first reported; texts per locale in market.insight_translations; related coins in market.content_entities.';
comment on column market.insights.id is 'Stable id from the content file (GET /insights/{id}).';
comment on column market.insights.sentiment is 'The insight''s reading of the market: bullish, bearish or neutral; null when it takes no side.';
comment on column market.insights.first_reported_at is 'When the observation was first published (sort=first_reported).';
comment on column market.insights.last_updated_at is 'When it was last revised (sort=last_updated).';
comment on column market.insights.views is 'Views counted by the web front end. API reads never change it; an import never overwrites it.';

create table market.insight_translations (
  insight_id int not null references market.insights (id) on delete cascade,
  locale text not null check (locale ~ '^[a-z]{2}(-[A-Z]{2})?$'),
  title text check (length(title) between 1 and 300),
  summary text check (length(summary) <= 1000),
  body text,
  primary key (insight_id, locale),
  check (locale <> 'en' or title is not null)
);
comment on table market.insight_translations is 'An insight''s texts per locale. English carries at least the title; a missing field of another locale falls back per field to its language, then English (market.localize()).';
