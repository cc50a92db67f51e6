-- Every minute rewrites most rows of market.coin_state (issue 46), and each index on a column that
-- moves is written again with the row. No read uses the indexes on marketcap, volume, changes and
-- price: the coin lists rank every matching coin in memory, the totals read every row. The rank
-- index stays (the top-100 reads). Free space on each page lets a row whose rank did not move be
-- updated in place (a HOT update: no index is written).
drop index market.coin_state_marketcap;
drop index market.coin_state_volume_24h;
drop index market.coin_state_change_24h;
drop index market.coin_state_change_7d;
drop index market.coin_state_price;
alter table market.coin_state set (fillfactor = 70);
