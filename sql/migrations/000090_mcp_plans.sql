-- MCP plans beside the Data API's: each plan belongs to one scope, ranks are per scope, and a key's
-- plan must be of the key's own scope, so an MCP key can never carry a Data API plan or the reverse.
alter table app.plans add column scope text not null default 'data-api' check (scope in ('data-api', 'mcp'));
comment on column app.plans.scope is 'Which keys may carry the plan: data-api (/api/v1) or mcp (the /mcp tool server). Ranks compare within a scope.';
alter table app.plans drop constraint plans_rank_key;
alter table app.plans add constraint plans_scope_rank_key unique (scope, rank);
alter table app.plans add constraint plans_name_scope_key unique (name, scope);
alter table app.api_keys add constraint api_keys_plan_scope_fkey foreign key (plan, scope) references app.plans (name, scope);

-- Each MCP tool call is one request of the quota; initialize and tools/list cost none.
-- per_page_cap does not apply to tools (they page at the endpoints' defaults) but is kept non-null.
insert into app.plans (name, rank, monthly_quota, requests_per_minute, per_page_cap, scope) values
  ('mcp-free', 1, 3000, 20, 100, 'mcp'),
  ('mcp-pro', 3, 300000, 300, 250, 'mcp');
