// The operator's pages (accounts with role admin): accounts found by a part of their address, each
// with its keys' plans, disable/enable and its role; this month's top accounts by requests; the
// service's status as /status reports it. The logic is in SQL (sql/functions/930_console_operator.sql).
import type { Context } from 'koa';
import { z } from 'zod';
import { statusMarkup, statusReport } from '../pages/status.ts';
import { PLANS_BY_SCOPE } from '../plans.ts';
import { choice, field, form, html, Html, navigation, notice } from './html.ts';
import { fieldErrors, rowId, when, type Account, type PageGroup } from './kit.ts';

/** Accounts shown on one page of a search. */
const PAGE_SIZE = 50;
/** Accounts on the usage page. */
const TOP_ACCOUNTS = 20;

const SCOPES = [['data-api', 'Data API keys'], ['mcp', 'MCP keys']] as const;
const ALL_PLANS = [...PLANS_BY_SCOPE['data-api'], ...PLANS_BY_SCOPE.mcp] as [string, ...string[]];

const search = z.object({
  q: z.string().trim().max(254, 'Use at most 254 characters.').default(''),
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
});
const ownerField = z.string().min(1, 'Unknown account.').max(200, 'Unknown account.');

interface AccountRow {
  owner: string;
  email: string;
  role: string;
  email_verified_at: Date | null;
  created_at: Date;
  disabled_at: Date | null;
  keys: string;
  requests_this_month: string;
}
interface KeyRow { id: string; name: string | null; prefix: string; plan: string; created_at: Date; last_used_at: Date | null; requests_this_month: string; retires_at: Date | null }

const accountPath = (owner: string) => `/console/admin/accounts/${encodeURIComponent(owner)}`;
/** What a disable/enable did, told by the account page it redirects to (`?done=`). */
const DONE = {
  disabled: 'Account disabled: it is signed out and its keys are refused.',
  enabled: 'Account enabled: it may sign in and its keys work again.',
};

export const operatorPages: PageGroup = (router, { sql, deps, csrf, page, admin, adminForm }) => {
  navigation('/console/admin/accounts', 'Accounts', true);
  navigation('/console/admin/usage', 'Service usage', true);
  navigation('/console/admin/status', 'Service status', true);

  // ---- accounts: search
  router.get('/admin/accounts', async (ctx) => {
    const who = await admin(ctx);
    if (!who) return;
    const parsed = search.safeParse(ctx.query);
    const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
    const searchForm = (error?: string) => html`<form method="get" action="/console/admin/accounts" role="search">${field({ name: 'q', label: 'E-mail address contains', type: 'search', value: q, error })}<button type="submit">Search</button></form>`;
    if (!parsed.success) return page(ctx, 'Accounts', searchForm(fieldErrors(parsed.error).q), 422, who);
    const { q: query, page: number } = parsed.data;
    const rows = await sql<AccountRow[]>`select * from app.console_admin_accounts(${query}, null, ${PAGE_SIZE + 1}, ${(number - 1) * PAGE_SIZE})`;
    const more = rows.length > PAGE_SIZE;
    const link = (to: number) => `/console/admin/accounts?${new URLSearchParams({ q: query, page: String(to) })}`;
    page(ctx, 'Accounts', html`${searchForm()}
<h2>${query ? html`Accounts whose address contains “${query}”` : 'All accounts'}</h2>
${rows.length === 0 ? html`<p>No account${number > 1 ? ' on this page' : ''}.</p>` : html`<div class="table"><table><thead><tr><th>E-mail address</th><th>Role</th><th>Verified</th><th>Created</th><th>Disabled</th><th>Keys</th><th>Requests this month</th></tr></thead><tbody>
${rows.slice(0, PAGE_SIZE).map((row) => html`<tr><td data-label="E-mail address"><a href="${accountPath(row.owner)}">${row.email}</a></td><td data-label="Role">${row.role}</td><td data-label="Verified">${row.email_verified_at ? when(row.email_verified_at) : 'no'}</td><td data-label="Created">${when(row.created_at)}</td><td data-label="Disabled">${row.disabled_at ? when(row.disabled_at) : 'no'}</td><td data-label="Keys">${row.keys}</td><td data-label="Requests this month">${row.requests_this_month}</td></tr>`)}
</tbody></table></div>`}
<nav aria-label="Pages" class="pages">${number > 1 ? html`<a href="${link(number - 1)}" rel="prev">Previous page</a> ` : ''}${more ? html`<a href="${link(number + 1)}" rel="next">Next page</a>` : ''}</nav>`, 200, who);
  });

  // ---- one account: its keys' plans, disable/enable, role
  async function accountPage(ctx: Context, who: Account, owner: string, message?: Html, status = 200) {
    const [row] = await sql<AccountRow[]>`select * from app.console_admin_accounts('', ${owner}, 1, 0)`;
    if (!row) return page(ctx, 'No such account', html`${message ?? ''}${notice('There is no account of that name (it may have been removed).', 'error')}<p><a href="/console/admin/accounts">All accounts</a></p>`, 404, who);
    const token = csrf(ctx);
    const keys = await Promise.all(SCOPES.map(([scope]) => sql<KeyRow[]>`select * from app.console_keys(${owner}, ${scope})`));
    const ownerInput = html`<input type="hidden" name="owner" value="${owner}">`;
    const self = owner === who.owner;
    page(ctx, row.email, html`${message ?? ''}
<p><a href="/console/admin/accounts">All accounts</a></p>
<dl class="facts"><dt>Role</dt><dd>${row.role}${self ? ' (you)' : ''}</dd><dt>Verified</dt><dd>${row.email_verified_at ? when(row.email_verified_at) : 'no'}</dd>
<dt>Created</dt><dd>${when(row.created_at)}</dd><dt>Disabled</dt><dd>${row.disabled_at ? when(row.disabled_at) : 'no'}</dd>
<dt>Requests this month</dt><dd>${row.requests_this_month}</dd><dt>Owner</dt><dd><code>${owner}</code></dd></dl>
<h2>Account</h2>
<div class="row-actions">${self ? html`<p>You cannot disable your own account.</p>` : row.disabled_at
      ? form('/console/admin/accounts/disable', token, [ownerInput, html`<input type="hidden" name="disabled" value="false">`], 'Enable account')
      // disabling is confirmed on a page of its own first (no script needed)
      : html`<form method="get" action="${accountPath(owner)}/disable" class="danger"><button type="submit">Disable account…</button></form>`}
${form('/console/admin/accounts/role', token, [ownerInput, html`<input type="hidden" name="role" value="${row.role === 'admin' ? 'user' : 'admin'}">`],
      row.role === 'admin' ? 'Make user (no operator pages)' : 'Make admin', 'secondary')}</div>
${SCOPES.map(([scope, title], i) => html`<h2>${title}</h2>
${keys[i]!.length === 0 ? html`<p>No key.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Prefix</th><th>Plan</th><th>Created</th><th>Last used</th><th>Requests this month</th><th>Change plan</th></tr></thead><tbody>
${keys[i]!.map((key) => html`<tr><td data-label="Name">${key.name ?? '(no name)'}</td><td data-label="Prefix"><code>${key.prefix}</code></td><td data-label="Plan">${key.plan}</td><td data-label="Created">${when(key.created_at)}</td><td data-label="Last used">${key.last_used_at ? when(key.last_used_at) : 'never'}</td><td data-label="Requests this month">${key.requests_this_month}${key.retires_at ? html`<br>Retires ${when(key.retires_at)} (rotated)` : ''}</td>
<td class="row-actions">${form('/console/admin/accounts/plan', token, [ownerInput, html`<input type="hidden" name="key" value="${key.id}">${choice({ name: 'plan', id: `plan-${key.id}`, label: `Plan of ${key.prefix}`, options: PLANS_BY_SCOPE[scope].map((plan) => [plan, plan] as const), value: key.plan })}`], 'Change plan')}</td></tr>`)}
</tbody></table></div>`}`)}`, status, who);
  }

  router.get('/admin/accounts/:owner', async (ctx) => {
    const who = await admin(ctx);
    if (!who) return;
    const owner = ownerField.safeParse(ctx.params.owner);
    const done = Object.hasOwn(DONE, String(ctx.query.done)) ? DONE[String(ctx.query.done) as keyof typeof DONE] : undefined;
    await accountPage(ctx, who, owner.success ? owner.data : '', done ? notice(done) : undefined);
  });

  // ---- disabling an account: confirmed on this page first, as the form of the account page leads here
  router.get('/admin/accounts/:owner/disable', async (ctx) => {
    const who = await admin(ctx);
    if (!who) return;
    const owner = ownerField.safeParse(ctx.params.owner);
    const [row] = owner.success ? await sql<AccountRow[]>`select * from app.console_admin_accounts('', ${owner.data}, 1, 0)` : [];
    if (!row || row.owner === who.owner || row.disabled_at) return accountPage(ctx, who, owner.success ? owner.data : '');
    page(ctx, 'Disable this account?', html`<p>Disabling <strong>${row.email}</strong> signs it out of every session and makes the API refuse its ${row.keys} working ${String(row.keys) === '1' ? 'key' : 'keys'} within a second, until an operator enables it again. Nothing is deleted.</p>
${form('/console/admin/accounts/disable', csrf(ctx), [html`<input type="hidden" name="owner" value="${row.owner}"><input type="hidden" name="disabled" value="true"><input type="hidden" name="confirm" value="yes">`], 'Disable account', 'danger')}
<p><a href="${accountPath(row.owner)}">Cancel: keep the account working</a></p>`, 200, who);
  });

  /** An admin's action on an account: the account page again with what happened. */
  function accountAction<T extends z.ZodRawShape>(path: string, shape: T, act: (who: Account, data: z.infer<z.ZodObject<T>> & { owner: string }) => Promise<{ message: string; status?: number; redirect?: string; seeOther?: boolean }>) {
    const schema = z.object({ owner: ownerField, ...shape });
    router.post(path, async (ctx) => {
      const form = await adminForm(ctx);
      if (!form) return;
      const { fields, who } = form;
      const parsed = schema.safeParse(fields);
      if (!parsed.success) {
        const owner = ownerField.safeParse(fields.owner);
        const errors = fieldErrors(parsed.error);
        return accountPage(ctx, who, owner.success ? owner.data : '', notice(`${Object.values(errors)[0]} Nothing was changed.`, 'error'), 422);
      }
      const data = parsed.data as z.infer<z.ZodObject<T>> & { owner: string };
      const done = await act(who, data);
      if (done.redirect) {
        ctx.redirect(done.redirect);
        if (done.seeOther) ctx.status = 303;
        return;
      }
      await accountPage(ctx, who, data.owner, notice(done.message, done.status ? 'error' : 'info'), done.status);
    });
  }

  accountAction('/admin/accounts/plan', { key: rowId, plan: z.enum(ALL_PLANS, `Choose one of: ${ALL_PLANS.join(', ')}.`) }, async (_who, { owner, key, plan }) => {
    const [row] = await sql<{ result: 'changed' | 'wrong_plan' | 'no_key' }[]>`select app.console_admin_set_plan(${owner}, ${key}, ${plan}) as result`;
    return {
      changed: { message: `The key's plan is now ${plan}: the API applies it within a second.` },
      wrong_plan: { message: `The plan ${plan} is not of this key's kind (Data API or MCP); nothing was changed.`, status: 422 },
      no_key: { message: 'That key is gone (revoked in another tab?); nothing was changed.', status: 404 },
    }[row!.result];
  });

  accountAction('/admin/accounts/disable', { disabled: z.enum(['true', 'false'], 'Unknown action.'), confirm: z.string().optional() }, async (who, { owner, disabled, confirm }) => {
    // not confirmed (a form of another page, or posted by hand): to the confirmation, nothing changed
    if (disabled === 'true' && confirm !== 'yes') return { message: '', redirect: `${accountPath(owner)}/disable`, seeOther: true };
    const [row] = await sql<{ result: 'changed' | 'self' | 'no_account' }[]>`select app.console_admin_set_disabled(${who.owner}, ${owner}, ${disabled === 'true'}) as result`;
    return {
      // post, redirect, get: a reload of the account page posts nothing again
      changed: { message: '', redirect: `${accountPath(owner)}?done=${disabled === 'true' ? 'disabled' : 'enabled'}`, seeOther: true },
      self: { message: 'You cannot disable your own account; nothing was changed.', status: 409 },
      no_account: { message: 'There is no such account; nothing was changed.', status: 404 },
    }[row!.result];
  });

  accountAction('/admin/accounts/role', { role: z.enum(['user', 'admin'], 'Unknown role.') }, async (who, { owner, role }) => {
    const [row] = await sql<{ result: 'changed' | 'last_admin' | 'no_account' }[]>`select app.console_admin_set_role(${owner}, ${role}) as result`;
    // no operator pages any more for whoever made itself a user
    if (row!.result === 'changed' && owner === who.owner && role !== 'admin') return { message: '', redirect: '/console/keys' };
    return {
      changed: { message: `The account is now ${role === 'admin' ? 'an admin' : 'a user'}.` },
      last_admin: { message: 'This is the last enabled admin: make another account admin first. Nothing was changed.', status: 409 },
      no_account: { message: 'There is no such account; nothing was changed.', status: 404 },
    }[row!.result];
  });

  // ---- usage: this month's top accounts
  router.get('/admin/usage', async (ctx) => {
    const who = await admin(ctx);
    if (!who) return;
    const rows = await sql<{ owner: string; email: string | null; role: string | null; disabled_at: Date | null; data_api: string; mcp: string; requests: string; all_requests: string }[]>`
      select * from app.console_admin_top_accounts(${TOP_ACCOUNTS})`;
    const endpoints = await sql<{ endpoint: string; requests: string; ok: string; client_errors: string; refused: string; server_errors: string; accounts: string }[]>`
      select * from app.console_admin_top_endpoints(${TOP_ACCOUNTS})`;
    const month = new Date().toISOString().slice(0, 7);
    page(ctx, 'Usage', html`<p>Requests counted against the monthly quotas in ${month} (UTC), by every key of an owner: ${rows[0]?.all_requests ?? '0'} in all.</p>
<h2>Top accounts this month</h2>
${rows.length === 0 ? html`<p>No request this month yet.</p>` : html`<div class="table"><table><thead><tr><th>Account</th><th>Data API requests</th><th>MCP requests</th><th>Requests</th></tr></thead><tbody>
${rows.map((row) => html`<tr><td data-label="Account">${row.role ? html`<a href="${accountPath(row.owner)}">${row.email}</a>` : html`${row.owner} (keys made by the CLI, no console account)`}${row.disabled_at ? ' (disabled)' : ''}</td><td data-label="Data API requests">${row.data_api}</td><td data-label="MCP requests">${row.mcp}</td><td data-label="Requests">${row.requests}</td></tr>`)}
</tbody></table></div>`}
<h2>Top endpoints this month</h2>
${endpoints.length === 0 ? html`<p>No request this month yet.</p>` : html`<div class="table"><table><thead><tr><th>Endpoint</th><th>Responses</th><th>2xx/3xx</th><th>4xx</th><th>429</th><th>5xx</th><th>Accounts</th></tr></thead><tbody>
${endpoints.map((row) => html`<tr><td data-label="Endpoint"><code>${row.endpoint}</code></td><td data-label="Responses">${row.requests}</td><td data-label="2xx/3xx">${row.ok}</td><td data-label="4xx">${row.client_errors}</td><td data-label="429">${row.refused}</td><td data-label="5xx">${row.server_errors}</td><td data-label="Accounts">${row.accounts}</td></tr>`)}
</tbody></table></div>`}`, 200, who);
  });

  // ---- the service's status: the report of /status
  router.get('/admin/status', async (ctx) => {
    const who = await admin(ctx);
    if (!who) return;
    const report = await statusReport(deps);
    page(ctx, 'Service status', statusMarkup(report, html` · <a href="/status">public status page</a> · <a href="/docs/status">thresholds</a>`), 200, who);
  });
};
