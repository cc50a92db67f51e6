// The operator's pages' markup (./operator.ts): the account search, one account (its keys' plans,
// disable/enable, role), the confirmation of a disable, and this month's usage.
import { PLANS_BY_SCOPE } from '../plans.ts';
import { choice, field, form, html, notice, type Html } from './html.ts';
import { when, type Account } from './kit.ts';

export const SCOPES = [['data-api', 'Data API keys'], ['mcp', 'MCP keys']] as const;

export interface AccountRow {
  owner: string;
  email: string;
  role: string;
  email_verified_at: Date | null;
  created_at: Date;
  disabled_at: Date | null;
  keys: string;
  requests_this_month: string;
}
export interface KeyRow { id: string; name: string | null; prefix: string; plan: string; created_at: Date; last_used_at: Date | null; requests_this_month: string; retires_at: Date | null }
export interface TopAccount { owner: string; email: string | null; role: string | null; disabled_at: Date | null; data_api: string; mcp: string; requests: string; all_requests: string }
export interface TopEndpoint { endpoint: string; requests: string; ok: string; client_errors: string; refused: string; server_errors: string; accounts: string }

export const accountPath = (owner: string) => `/console/admin/accounts/${encodeURIComponent(owner)}`;

/** The search form, with `q` as typed. */
export const searchForm = (q: string, error?: string) => html`<form method="get" action="/console/admin/accounts" role="search">${field({ name: 'q', label: 'E-mail address contains', type: 'search', value: q, error })}<button type="submit">Search</button></form>`;

const accountRow = (row: AccountRow) => html`<tr><td data-label="E-mail address"><a href="${accountPath(row.owner)}">${row.email}</a></td><td data-label="Role">${row.role}</td><td data-label="Verified">${row.email_verified_at ? when(row.email_verified_at) : 'no'}</td><td data-label="Created">${when(row.created_at)}</td><td data-label="Disabled">${row.disabled_at ? when(row.disabled_at) : 'no'}</td><td data-label="Keys">${row.keys}</td><td data-label="Requests this month">${row.requests_this_month}</td></tr>`;

/** A page of the accounts found; `more`: a next page exists. */
export function accountsView(q: string, query: string, rows: AccountRow[], number: number, more: boolean) {
  const link = (to: number) => `/console/admin/accounts?${new URLSearchParams({ q: query, page: String(to) })}`;
  return html`${searchForm(q)}
<h2>${query ? html`Accounts whose address contains “${query}”` : 'All accounts'}</h2>
${rows.length === 0 ? html`<p>No account${number > 1 ? ' on this page' : ''}.</p>` : html`<div class="table"><table><thead><tr><th>E-mail address</th><th>Role</th><th>Verified</th><th>Created</th><th>Disabled</th><th>Keys</th><th>Requests this month</th></tr></thead><tbody>
${rows.map(accountRow)}
</tbody></table></div>`}
<nav aria-label="Pages" class="pages">${number > 1 ? html`<a href="${link(number - 1)}" rel="prev">Previous page</a> ` : ''}${more ? html`<a href="${link(number + 1)}" rel="next">Next page</a>` : ''}</nav>`;
}

export const noAccountView = (message?: Html) => html`${message ?? ''}${notice('There is no account of that name (it may have been removed).', 'error')}<p><a href="/console/admin/accounts">All accounts</a></p>`;

const ownerInput = (owner: string) => html`<input type="hidden" name="owner" value="${owner}">`;

/** Disable (confirmed on a page of its own first, no script needed) or enable, and the role's switch. */
function accountActions(row: AccountRow, self: boolean, csrf: string) {
  const owner = ownerInput(row.owner);
  return html`<div class="row-actions">${self ? html`<p>You cannot disable your own account.</p>` : row.disabled_at
    ? form('/console/admin/accounts/disable', csrf, [owner, html`<input type="hidden" name="disabled" value="false">`], 'Enable account')
    : html`<form method="get" action="${accountPath(row.owner)}/disable" class="danger"><button type="submit">Disable account…</button></form>`}
${form('/console/admin/accounts/role', csrf, [owner, html`<input type="hidden" name="role" value="${row.role === 'admin' ? 'user' : 'admin'}">`],
    row.role === 'admin' ? 'Make user (no operator pages)' : 'Make admin', 'secondary')}</div>`;
}

const keyRow = (owner: string, scope: (typeof SCOPES)[number][0], key: KeyRow, csrf: string) => html`<tr><td data-label="Name">${key.name ?? '(no name)'}</td><td data-label="Prefix"><code>${key.prefix}</code></td><td data-label="Plan">${key.plan}</td><td data-label="Created">${when(key.created_at)}</td><td data-label="Last used">${key.last_used_at ? when(key.last_used_at) : 'never'}</td><td data-label="Requests this month">${key.requests_this_month}${key.retires_at ? html`<br>Retires ${when(key.retires_at)} (rotated)` : ''}</td>
<td class="row-actions">${form('/console/admin/accounts/plan', csrf, [ownerInput(owner), html`<input type="hidden" name="key" value="${key.id}">${choice({ name: 'plan', id: `plan-${key.id}`, label: `Plan of ${key.prefix}`, options: PLANS_BY_SCOPE[scope].map((plan) => [plan, plan] as const), value: key.plan })}`], 'Change plan')}</td></tr>`;

/** One account: its facts, its actions, each scope's keys with their plan's form. */
export function accountView(who: Account, row: AccountRow, keys: KeyRow[][], csrf: string, message?: Html) {
  const self = row.owner === who.owner;
  return html`${message ?? ''}
<p><a href="/console/admin/accounts">All accounts</a></p>
<dl class="facts"><dt>Role</dt><dd>${row.role}${self ? ' (you)' : ''}</dd><dt>Verified</dt><dd>${row.email_verified_at ? when(row.email_verified_at) : 'no'}</dd>
<dt>Created</dt><dd>${when(row.created_at)}</dd><dt>Disabled</dt><dd>${row.disabled_at ? when(row.disabled_at) : 'no'}</dd>
<dt>Requests this month</dt><dd>${row.requests_this_month}</dd><dt>Owner</dt><dd><code>${row.owner}</code></dd></dl>
<h2>Account</h2>
${accountActions(row, self, csrf)}
${SCOPES.map(([scope, title], i) => html`<h2>${title}</h2>
${keys[i]!.length === 0 ? html`<p>No key.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Prefix</th><th>Plan</th><th>Created</th><th>Last used</th><th>Requests this month</th><th>Change plan</th></tr></thead><tbody>
${keys[i]!.map((key) => keyRow(row.owner, scope, key, csrf))}
</tbody></table></div>`}`)}`;
}

/** The confirmation of a disable. */
export const disableView = (row: AccountRow, csrf: string) => html`<p>Disabling <strong>${row.email}</strong> signs it out of every session and makes the API refuse its ${row.keys} working ${String(row.keys) === '1' ? 'key' : 'keys'} within a second, until an operator enables it again. Nothing is deleted.</p>
${form('/console/admin/accounts/disable', csrf, [html`<input type="hidden" name="owner" value="${row.owner}"><input type="hidden" name="disabled" value="true"><input type="hidden" name="confirm" value="yes">`], 'Disable account', 'danger')}
<p><a href="${accountPath(row.owner)}">Cancel: keep the account working</a></p>`;

/** This month's top accounts and endpoints. */
export const usageView = (rows: TopAccount[], endpoints: TopEndpoint[], month: string) => html`<p>Requests counted against the monthly quotas in ${month} (UTC), by every key of an owner: ${rows[0]?.all_requests ?? '0'} in all.</p>
<h2>Top accounts this month</h2>
${rows.length === 0 ? html`<p>No request this month yet.</p>` : html`<div class="table"><table><thead><tr><th>Account</th><th>Data API requests</th><th>MCP requests</th><th>Requests</th></tr></thead><tbody>
${rows.map((row) => html`<tr><td data-label="Account">${row.role ? html`<a href="${accountPath(row.owner)}">${row.email}</a>` : html`${row.owner} (keys made by the CLI, no console account)`}${row.disabled_at ? ' (disabled)' : ''}</td><td data-label="Data API requests">${row.data_api}</td><td data-label="MCP requests">${row.mcp}</td><td data-label="Requests">${row.requests}</td></tr>`)}
</tbody></table></div>`}
<h2>Top endpoints this month</h2>
${endpoints.length === 0 ? html`<p>No request this month yet.</p>` : html`<div class="table"><table><thead><tr><th>Endpoint</th><th>Responses</th><th>2xx/3xx</th><th>4xx</th><th>429</th><th>5xx</th><th>Accounts</th></tr></thead><tbody>
${endpoints.map((row) => html`<tr><td data-label="Endpoint"><code>${row.endpoint}</code></td><td data-label="Responses">${row.requests}</td><td data-label="2xx/3xx">${row.ok}</td><td data-label="4xx">${row.client_errors}</td><td data-label="429">${row.refused}</td><td data-label="5xx">${row.server_errors}</td><td data-label="Accounts">${row.accounts}</td></tr>`)}
</tbody></table></div>`}`;
