-- Community votes: the rolling 24-hour tallies (public) and casting a vote (key owners only).

-- why: the tallies of one coin, shared by the read and the cast
create or replace function app.coin_vote_tally(p_coin_id int) returns json
language sql stable
as $$
  select json_build_object(
    'coin', (select c.slug from market.coins c where c.id = p_coin_id),
    'bullish', count(*) filter (where v.vote = 'bullish')::int,
    'bearish', count(*) filter (where v.vote = 'bearish')::int,
    'total', count(*)::int)
  from app.coin_votes v
  where v.coin_id = p_coin_id and v.voted_at > now() - interval '24 hours'
$$;
comment on function app.coin_vote_tally(int) is 'Bullish, bearish and total votes on a coin over the rolling 24 hours, as {coin (its slug), bullish, bearish, total}.';

-- why: the tallies are public while the votes (who voted) stay in app: security definer
create or replace function api.coin_votes(p_slug text) returns json
language plpgsql stable security definer
set search_path = app, market, pg_catalog, pg_temp
as $$
declare
  v_coin int := market.coin_id(p_slug);
begin
  return app.coin_vote_tally(v_coin);
end;
$$;
comment on function api.coin_votes(text) is 'Community vote tallies of the coin with this slug over the rolling 24 hours: {coin, bullish, bearish, total}. Unknown slug: MD404. Endpoint: GET /api/v1/coins/{slug}/votes.';

-- why: one vote per owner, coin and rolling 24 hours, decided atomically
create or replace function app.cast_coin_vote(p_owner text, p_slug text, p_vote text) returns json
language plpgsql volatile
as $$
declare
  v_coin int := market.coin_id(p_slug);
  v_id bigint;
begin
  if p_vote is null or p_vote not in ('bullish', 'bearish') then
    raise exception 'vote must be bullish or bearish.' using errcode = 'MD422', column = 'vote';
  end if;
  -- two concurrent votes of one owner on one coin must not both insert
  perform pg_advisory_xact_lock(hashtextextended(p_owner || '/' || v_coin, 0));
  select v.id into v_id from app.coin_votes v
  where v.owner = p_owner and v.coin_id = v_coin and v.voted_at > now() - interval '24 hours'
  order by v.voted_at desc limit 1;
  if v_id is null then
    insert into app.coin_votes (owner, coin_id, vote) values (p_owner, v_coin, p_vote);
  else
    update app.coin_votes set vote = p_vote, updated_at = now() where id = v_id;
  end if;
  return (app.coin_vote_tally(v_coin)::jsonb || jsonb_build_object('your_vote', p_vote))::json;
end;
$$;
comment on function app.cast_coin_vote(text, text, text) is 'Casts p_owner''s vote (bullish or bearish) on the coin with this slug: a new vote when the owner has none on it in the last 24 hours, else that vote changed. Returns the tallies with your_vote. Unknown slug MD404, bad vote MD422. Endpoint: POST /api/v1/coins/{slug}/votes.';
