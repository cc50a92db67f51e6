-- Functions replaced when every coin and venue slug came to be looked up by market.coin_ids and
-- market.exchange_ids (one case rule): dropped once here, as in 000098.
-- a second coin lookup (case-sensitive, its own 404 message); the indicators call market.coin_id
drop function if exists market.indicator_coin_id(text);
-- echoed the slug as given; the tally now names the coin by its stored slug
drop function if exists app.coin_vote_tally(int, text);
