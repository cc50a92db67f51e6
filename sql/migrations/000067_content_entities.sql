-- What editorial content is about: the coins, exchanges and wallets an article, video or insight
-- relates to. By slug, like market.wallet_assets: reads resolve the slug to the coin, exchange or
-- wallet (and its name) when one exists.
create table market.content_entities (
  article_id int references market.articles (id) on delete cascade,
  video_id int references market.videos (id) on delete cascade,
  insight_id int references market.insights (id) on delete cascade,
  entity_type text not null check (entity_type in ('coin', 'exchange', 'wallet')),
  entity_slug text not null check (entity_slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(entity_slug) <= 120),
  position smallint not null default 0,
  check (num_nonnulls(article_id, video_id, insight_id) = 1)
);
create unique index content_entities_article on market.content_entities (article_id, entity_type, entity_slug) where article_id is not null;
create unique index content_entities_video on market.content_entities (video_id, entity_type, entity_slug) where video_id is not null;
create unique index content_entities_insight on market.content_entities (insight_id, entity_type, entity_slug) where insight_id is not null;
create index content_entities_entity on market.content_entities (entity_type, entity_slug);
comment on table market.content_entities is 'Related coins, exchanges and wallets of editorial content: exactly one of article_id, video_id, insight_id per row. The coin, exchange and wallet filters of the Editorial endpoints match entity_slug.';
comment on column market.content_entities.entity_slug is 'Slug of the coin (market.coins), exchange (market.exchanges) or wallet (market.wallets); kept even while nothing has that slug.';
comment on column market.content_entities.position is 'Display order within the content''s `entities`.';
