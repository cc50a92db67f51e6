-- The running state of market.json_page (sql/functions/005_json_page.sql), the one pagination
-- mechanism of the list functions: rows counted, and the rows of the page kept.
create type market.json_page_state as (total bigint, data json[]);
comment on type market.json_page_state is 'State of the market.json_page aggregate: rows seen so far and the rows of the requested page.';
