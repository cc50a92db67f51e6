-- The trust score gets the reference's 13-factor breakdown (issue 15). The columns keep their
-- types (a number and a jsonb object); what changes is the formula, whose inputs are now many
-- more than the old four, so the old signature goes: sql/functions/400_exchanges.sql creates the
-- new one. Stored breakdowns of the old shape are cleared: the next refresh of the venue state
-- (after every ticker update) writes the new ones, and until then null reads as "not computed".
drop function if exists market.exchange_trust_score(numeric, double precision, double precision, int, int);
update market.exchange_state set trust_score = null, trust_breakdown = null where trust_breakdown is not null;
comment on column market.exchange_state.trust_score is 'Trust score 0-10 (one decimal), the weighted mean of the 13 factors of trust_breakdown, see market.exchange_trust_score(); null for an unranked venue.';
comment on column market.exchange_state.trust_breakdown is 'The 13 factors of the trust score, each 0-10: rank, volume, age, volume_trend, stability, rank_stability, ticker_health, pairs, community, assets, dominance, market_breadth, transparency (formulas: market.exchange_trust_score()); null for an unranked venue.';
