-- The coin search (market.coin_search_tier) at thousands of coins: an exact or prefix match on the
-- name, symbol or slug found through an index, so that a typed coin field's suggestions
-- (market.coin_search) read a few index entries instead of every coin. text_pattern_ops: a LIKE
-- prefix uses them under any collation. No pg_trgm (the embedded database has none): a substring
-- match anywhere in the name still reads every coin, once, and only when the prefixes fall short.
create index coins_name_search on market.coins (lower(name) text_pattern_ops);
create index coins_symbol_search on market.coins (lower(symbol) text_pattern_ops);
create index coins_slug_search on market.coins (slug text_pattern_ops);
comment on index market.coins_name_search is 'Exact and prefix matches on the lowercased name, for the coin search (market.coin_search).';
comment on index market.coins_symbol_search is 'Exact and prefix matches on the lowercased symbol, for the coin search (market.coin_search).';
comment on index market.coins_slug_search is 'Prefix matches on the slug under any collation, for the coin search (market.coin_search).';
