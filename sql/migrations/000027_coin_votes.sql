-- Community sentiment votes: one vote per key owner and coin per rolling 24 hours (a new vote
-- inside the window changes the existing one). Owners are API-key owners, so the table lives in
-- app (never readable by the analyst role); the tallies are public through api.coin_votes().
create table app.coin_votes (
  id bigint generated always as identity primary key,
  owner text not null,
  coin_id int not null references market.coins (id) on delete cascade,
  vote text not null check (vote in ('bullish', 'bearish')),
  voted_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index coin_votes_coin_time on app.coin_votes (coin_id, voted_at desc);
create index coin_votes_owner_coin_time on app.coin_votes (owner, coin_id, voted_at desc);
comment on table app.coin_votes is 'Bullish/bearish votes of API-key owners on coins. A vote counts for 24 hours from voted_at; a second vote by the same owner on the same coin within that window changes vote (and updated_at), not voted_at. See app.cast_coin_vote().';
