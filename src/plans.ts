// The plans' names as the code refers to them (the plans themselves, with their ranks and limits,
// are rows of app.plans; sql/migrations/000003_keys.sql, 000090_mcp_plans.sql and 000133_widget_plans.sql).
export type PlanName = 'free' | 'starter' | 'pro';
/** The plans of MCP keys (sql/migrations/000090_mcp_plans.sql); a plan belongs to one key scope. */
export type McpPlanName = 'mcp-free' | 'mcp-pro';
/** The plans of widget keys (sql/migrations/000133_widget_plans.sql): monthly page views of the embeddable widgets. */
export type WidgetPlanName = 'widget-free' | 'widget-pro';
export const PLANS_BY_SCOPE = { 'data-api': ['free', 'starter', 'pro'], mcp: ['mcp-free', 'mcp-pro'], widget: ['widget-free', 'widget-pro'] } as const;
