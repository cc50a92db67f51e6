-- A slug once served never changes (issue 45): when a discovered coin is renamed, the slug its new
-- name would get becomes an alias that every coin lookup (market.coin_ids) resolves to the coin.
create table market.coin_slug_aliases (
  slug text primary key check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 120),
  coin_id int not null references market.coins (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index coin_slug_aliases_coin on market.coin_slug_aliases (coin_id);
comment on table market.coin_slug_aliases is 'Other slugs of a coin (a discovered coin''s new name as a slug, after a rename): market.coin_ids resolves them to the coin, which answers under its own slug. A coin''s real slug always wins over an alias.';
comment on column market.coin_slug_aliases.slug is 'The alias, lowercase like every slug.';
comment on column market.coin_slug_aliases.coin_id is 'The coin it names (market.coins).';
comment on column market.coin_slug_aliases.created_at is 'When the alias was made (the rename).';
