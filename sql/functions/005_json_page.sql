-- One page of a list in one pass: every list endpoint's {"total": n, "data": [...]} comes from here.

create or replace function market.json_page_step(p_state market.json_page_state, p_item json, p_skip bigint, p_take int)
returns market.json_page_state
language sql immutable parallel safe
as $$
  select row(p_state.total + 1,
    case when p_state.total >= p_skip and p_state.total < p_skip + p_take then p_state.data || p_item else p_state.data end
  )::market.json_page_state
$$;
comment on function market.json_page_step(market.json_page_state, json, bigint, int) is 'Transition of market.json_page: counts the row and keeps it when it falls on the page.';

create or replace function market.json_page_final(p_state market.json_page_state) returns json
language sql immutable parallel safe
as $$ select json_build_object('total', p_state.total, 'data', coalesce(array_to_json(p_state.data), '[]'::json)) $$;
comment on function market.json_page_final(market.json_page_state) is 'Final function of market.json_page: {"total": rows, "data": [rows of the page]}.';

create or replace aggregate market.json_page(json, bigint, int) (
  sfunc = market.json_page_step,
  stype = market.json_page_state,
  finalfunc = market.json_page_final,
  initcond = '(0,"{}")'
);
comment on aggregate market.json_page(json, bigint, int) is
'One page of a list: market.json_page(row_json, skip, take order by position) = {"total": all rows, "data": [rows skip+1 .. skip+take in that order]}; '
'for page p of size n, skip = (p - 1) * n. Used by every paginated api.* function.';
