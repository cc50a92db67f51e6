-- The coins a wallet supports. Referenced by coin slug, not id: curated files are written against
-- slugs and may name a coin before any source has created it; reads join market.coins by slug.
create table market.wallet_assets (
  wallet_id int not null references market.wallets (id) on delete cascade,
  coin_slug text not null check (coin_slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(coin_slug) <= 120),
  primary key (wallet_id, coin_slug)
);
create index wallet_assets_coin_slug on market.wallet_assets (coin_slug, wallet_id);
comment on table market.wallet_assets is 'Coins a wallet supports, by market.coins.slug. A slug no coin has yet is kept and counts once the coin exists; the API''s `assets` counts the supported coins in a public listing status.';
