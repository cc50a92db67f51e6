-- The wallet tag taxonomy: tags (hardware, non-custodial, staking, ...) grouped in categories
-- (type, custody, features, ...). Wallet detail and compare responses show a wallet's tags grouped
-- this way, as `categories`.
create table market.wallet_tag_categories (
  slug text primary key check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 120),
  name text not null check (length(name) between 1 and 200),
  position smallint not null default 0
);
comment on table market.wallet_tag_categories is 'Categories of the wallet tag taxonomy (e.g. type, custody, features, security), ordered by position.';
comment on column market.wallet_tag_categories.position is 'Display order of the category in wallet detail and compare responses (then slug).';

create table market.wallet_tags (
  slug text primary key check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 120),
  category text not null references market.wallet_tag_categories (slug) on update cascade,
  name text not null check (length(name) between 1 and 200),
  position smallint not null default 0
);
create index wallet_tags_category on market.wallet_tags (category, position, slug);
comment on table market.wallet_tags is 'Wallet tags, each in one category of market.wallet_tag_categories; the tags filter of /wallets takes their slugs.';
comment on column market.wallet_tags.position is 'Display order within the category (then slug).';
