// The plans' names as the code refers to them (the plans themselves, with their ranks and limits,
// are rows of app.plans; sql/migrations/000003_keys.sql and 000090_mcp_plans.sql).
export type PlanName = 'free' | 'starter' | 'pro';
/** The plans of MCP keys (sql/migrations/000090_mcp_plans.sql); a plan belongs to one key scope. */
export type McpPlanName = 'mcp-free' | 'mcp-pro';
export const PLANS_BY_SCOPE = { 'data-api': ['free', 'starter', 'pro'], mcp: ['mcp-free', 'mcp-pro'] } as const;
