// GET /status (a page for people, refreshing itself) and GET /status.json (its twin): the overall
// state and each component's state and figures, from app.status_report (thresholds there and in
// docs/status.md). No key. A database that cannot answer is itself the report: outage, not a 5xx;
// one that answers a new connection but not the report in time is busy, not down.
import type { Context } from 'koa';
import { VERSION } from '../version.ts';
import { emailConfigured, workerStaleAfterMs } from '../config.ts';
import { migrationFiles } from '../db/migrate.ts';
import { askDatabase, lastKnown } from '../http/health.ts';
import { type Html, html, joinHtml } from '../html.ts';
import { refreshControl, type WritePage } from './shell.ts';
import type { Deps } from '../http/admission.ts';

/** busy: it answers, slowly (the database behind a long statement); never an outage while it answers */
export type ComponentState = 'operational' | 'busy' | 'degraded' | 'outage';
export interface StatusComponent {
  id: string;
  name: string;
  state: ComponentState;
  figures: Record<string, unknown>;
}
export interface StatusReport {
  status: ComponentState;
  version: string;
  checked_at: string;
  components: StatusComponent[];
}

const RANK: Record<ComponentState, number> = { operational: 0, busy: 1, degraded: 2, outage: 3 };
export const REFRESH_SECONDS = 30;
const lastComponents = lastKnown<StatusComponent[]>();

export async function statusReport(deps: Deps): Promise<StatusReport> {
  const { sql, config } = deps;
  const database = { kind: config.database.embedded ? 'embedded' : 'server' };
  let components: StatusComponent[];
  const answer = await askDatabase(deps, sql<{ report: StatusComponent[] }[]>`
    select app.status_report(${migrationFiles()}::text[], make_interval(secs => ${workerStaleAfterMs(config) / 1000})) as report`);
  if (answer.state === 'answered') {
    components = answer.value[0]!.report.map((component) =>
      component.id === 'database' ? { ...component, figures: { ...database, ...component.figures } }
        // on or off is this process's setting (SMTP_URL): off says why e-mail alarms are refused
        : component.id === 'email' ? { ...component, figures: { sending: emailConfigured(config) ? 'on' : 'off', ...component.figures } }
        : component);
    lastComponents.keep(sql, components);
  } else if (answer.state === 'busy') {
    // it answers a new connection, behind a long statement: busy, with what this process runs, and
    // the other components as the last full answer showed them
    const last = lastComponents.get(sql);
    components = [
      {
        id: 'database', name: 'Database', state: 'busy',
        figures: { ...database, reachable: true, busy: true, doing: answer.doing, figures_as_of: last?.at.toISOString() ?? null },
      },
      ...(last?.value.filter((component) => component.id !== 'database') ?? []),
    ];
  } else {
    // An error from the database itself means it answered (but is not migrated for this version).
    const answered = answer.state === 'not_migrated';
    components = [{
      id: 'database', name: 'Database', state: 'outage',
      figures: { ...database, reachable: answered, migrations_current: answered ? false : null },
    }];
  }
  // This answer is the API's figure: it is up.
  components.unshift({ id: 'api', name: 'API', state: 'operational', figures: { version: VERSION } });
  const status = components.reduce<ComponentState>((worst, c) => (RANK[c.state] > RANK[worst] ? c.state : worst), 'operational');
  return { status, version: VERSION, checked_at: new Date().toISOString(), components };
}

export function statusJson(deps: Deps) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: await statusReport(deps), meta: { refresh_seconds: REFRESH_SECONDS, thresholds: '/docs/status' } };
  };
}

const LABEL: Record<ComponentState, string> = { operational: 'Operational', busy: 'Busy', degraded: 'Degraded', outage: 'Outage' };
const HEADLINE: Record<ComponentState, string> = {
  operational: 'All systems operational', busy: 'Busy: answers may be slow', degraded: 'Partially degraded service', outage: 'Service outage',
};

const figureText = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.length ? value.join(', ') : 'none';
  return String(value);
};

/**
 * The report as markup, escaped: the overall state, when it was checked (and `extra`: links beside
 * it) and the components' table. The /status page and the console's operator status page show it.
 */
export function statusMarkup(report: StatusReport, extra?: Html): Html {
  const rows = report.components.map((component) => {
    const figures = Object.entries(component.figures).map(([name, value]) => html`${name.replace(/_/g, ' ')}: ${figureText(value)}`);
    const state = html`<td class="${component.state}" data-state="${component.state}">${LABEL[component.state]}</td>`;
    return html`<tr data-component="${component.id}"><th scope="row">${component.name}</th>${state}<td>${joinHtml(figures, html`<br>`)}</td></tr>`;
  });
  return html`<p id="overall" class="${report.status}" data-state="${report.status}"><strong>${HEADLINE[report.status]}</strong></p>
<p>Version ${report.version} · checked ${report.checked_at}${extra}</p>
<table class="components"><thead><tr><th>Component</th><th>State</th><th>Figures</th></tr></thead>
<tbody>
${joinHtml(rows, '\n')}
</tbody></table>`;
}

export function statusPage(deps: Deps, page: WritePage) {
  return async (ctx: Context) => {
    ctx.set('Cache-Control', 'no-store');
    const report = await statusReport(deps);
    page(ctx, 'Status', html`<h1>Status</h1>
${statusMarkup(report, html` · ${refreshControl(REFRESH_SECONDS)} ·
<a href="/status.json">JSON</a> · <a href="/docs/status">thresholds</a>`)}`, { refreshSeconds: REFRESH_SECONDS });
  };
}
