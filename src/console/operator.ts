// The operator's pages (accounts with role admin): accounts found by a part of their address, each
// with its keys' plans, disable/enable and its role; this month's top accounts by requests; the
// service's status as /status reports it. The logic is in SQL (sql/functions/930_console_operator.sql).
// Markup in ./operator.views.ts.
import type { Context } from 'koa';
import { z } from 'zod';
import { statusMarkup, statusReport } from '../pages/status.ts';
import { PLANS_BY_SCOPE } from '../plans.ts';
import { html, navigation, notice, type Html } from './html.ts';
import { fieldErrors, rowId, type Account, type Fields, type Kit, type PageGroup } from './kit.ts';
import { accountPath, accountsView, accountView, disableView, noAccountView, SCOPES, searchForm, usageView, type AccountRow, type KeyRow, type TopAccount, type TopEndpoint } from './operator.views.ts';

/** Accounts shown on one page of a search. */
const PAGE_SIZE = 50;
/** Accounts on the usage page. */
const TOP_ACCOUNTS = 20;

const ALL_PLANS = [...PLANS_BY_SCOPE['data-api'], ...PLANS_BY_SCOPE.mcp] as [string, ...string[]];

const search = z.object({
  q: z.string().trim().max(254, 'Use at most 254 characters.').default(''),
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
});
const ownerField = z.string().min(1, 'Unknown account.').max(200, 'Unknown account.');

/** What a disable/enable did, told by the account page it redirects to (`?done=`). */
const DONE = {
  disabled: 'Account disabled: it is signed out and its keys are refused.',
  enabled: 'Account enabled: it may sign in and its keys work again.',
};

/** What an admin's action on an account did: a message on the account page (an error with `status`), or a redirect. */
type Outcome = { message: string; status?: number; redirect?: string; seeOther?: boolean };
/** An admin's action on an account: its fields besides `owner`, and what it does with them. */
interface AccountAction<T extends z.ZodRawShape> { shape: T; act: (kit: Kit, who: Account, data: z.infer<z.ZodObject<T>> & { owner: string }) => Promise<Outcome> }
const accountAction = <T extends z.ZodRawShape>(action: AccountAction<T>) => action as unknown as AccountAction<z.ZodRawShape>;

export const operatorPages: PageGroup = (routes, kit) => {
  navigation('/console/admin/accounts', 'Accounts', true);
  navigation('/console/admin/usage', 'Service usage', true);
  navigation('/console/admin/status', 'Service status', true);
  routes.admin.get('/admin/accounts', (ctx, who) => searchPage(kit, ctx, who));
  routes.admin.get('/admin/accounts/:owner', (ctx, who) => {
    const owner = ownerField.safeParse(ctx.params.owner);
    const done = Object.hasOwn(DONE, String(ctx.query.done)) ? DONE[String(ctx.query.done) as keyof typeof DONE] : undefined;
    return accountPage(kit, ctx, who, owner.success ? owner.data : '', done ? notice(done) : undefined);
  });
  // disabling an account: confirmed on this page first, as the form of the account page leads here
  routes.admin.get('/admin/accounts/:owner/disable', (ctx, who) => confirmDisable(kit, ctx, who));
  for (const [path, action] of Object.entries(ACCOUNT_ACTIONS)) {
    routes.admin.post(`/admin/accounts/${path}`, (ctx, who, fields) => actOnAccount(kit, ctx, who, fields, action));
  }
  routes.admin.get('/admin/usage', (ctx, who) => usagePage(kit, ctx, who));
  // the service's status: the report of /status
  routes.admin.get('/admin/status', async (ctx, who) => {
    const report = await statusReport(kit.deps);
    kit.page(ctx, 'Service status', statusMarkup(report, html` · <a href="/status">public status page</a> · <a href="/docs/status">thresholds</a>`), 200, who);
  });
};

async function searchPage({ sql, page }: Kit, ctx: Context, who: Account) {
  const parsed = search.safeParse(ctx.query);
  const q = typeof ctx.query.q === 'string' ? ctx.query.q : '';
  if (!parsed.success) return page(ctx, 'Accounts', searchForm(q, fieldErrors(parsed.error).q), 422, who);
  const { q: query, page: number } = parsed.data;
  const rows = await sql<AccountRow[]>`select * from app.console_admin_accounts(${query}, null, ${PAGE_SIZE + 1}, ${(number - 1) * PAGE_SIZE})`;
  page(ctx, 'Accounts', accountsView(q, query, rows.slice(0, PAGE_SIZE), number, rows.length > PAGE_SIZE), 200, who);
}

const findAccount = async ({ sql }: Kit, owner: string) => (await sql<AccountRow[]>`select * from app.console_admin_accounts('', ${owner}, 1, 0)`)[0];

/** One account: its keys' plans, disable/enable, role (a 404 page when there is none of that name). */
async function accountPage(kit: Kit, ctx: Context, who: Account, owner: string, message?: Html, status = 200) {
  const row = await findAccount(kit, owner);
  if (!row) return kit.page(ctx, 'No such account', noAccountView(message), 404, who);
  const keys = await Promise.all(SCOPES.map(([scope]) => kit.sql<KeyRow[]>`select * from app.console_keys(${owner}, ${scope})`));
  kit.page(ctx, row.email, accountView(who, row, keys, kit.csrf(ctx), message), status, who);
}

async function confirmDisable(kit: Kit, ctx: Context, who: Account) {
  const owner = ownerField.safeParse(ctx.params.owner);
  const row = owner.success ? await findAccount(kit, owner.data) : undefined;
  if (!row || row.owner === who.owner || row.disabled_at) return accountPage(kit, ctx, who, owner.success ? owner.data : '');
  kit.page(ctx, 'Disable this account?', disableView(row, kit.csrf(ctx)), 200, who);
}

/** An admin's action on an account: the account page again with what happened (or the redirect it asks). */
async function actOnAccount(kit: Kit, ctx: Context, who: Account, fields: Fields, { shape, act }: AccountAction<z.ZodRawShape>) {
  const parsed = z.object({ owner: ownerField, ...shape }).safeParse(fields);
  if (!parsed.success) {
    const owner = ownerField.safeParse(fields.owner);
    const errors = fieldErrors(parsed.error);
    return accountPage(kit, ctx, who, owner.success ? owner.data : '', notice(`${Object.values(errors)[0]} Nothing was changed.`, 'error'), 422);
  }
  const data = parsed.data as { owner: string };
  const done = await act(kit, who, data);
  if (done.redirect) {
    ctx.redirect(done.redirect);
    if (done.seeOther) ctx.status = 303;
    return;
  }
  await accountPage(kit, ctx, who, data.owner, notice(done.message, done.status ? 'error' : 'info'), done.status);
}

const ACCOUNT_ACTIONS: Record<string, AccountAction<z.ZodRawShape>> = {
  plan: accountAction({
    shape: { key: rowId, plan: z.enum(ALL_PLANS, `Choose one of: ${ALL_PLANS.join(', ')}.`) },
    act: async ({ sql }, _who, { owner, key, plan }) => {
      const [row] = await sql<{ result: 'changed' | 'wrong_plan' | 'no_key' }[]>`select app.console_admin_set_plan(${owner}, ${key}, ${plan}) as result`;
      return {
        changed: { message: `The key's plan is now ${plan}: the API applies it within a second.` },
        wrong_plan: { message: `The plan ${plan} is not of this key's kind (Data API or MCP); nothing was changed.`, status: 422 },
        no_key: { message: 'That key is gone (revoked in another tab?); nothing was changed.', status: 404 },
      }[row!.result];
    },
  }),
  disable: accountAction({
    shape: { disabled: z.enum(['true', 'false'], 'Unknown action.'), confirm: z.string().optional() },
    act: async ({ sql }, who, { owner, disabled, confirm }) => {
      // not confirmed (a form of another page, or posted by hand): to the confirmation, nothing changed
      if (disabled === 'true' && confirm !== 'yes') return { message: '', redirect: `${accountPath(owner)}/disable`, seeOther: true };
      const [row] = await sql<{ result: 'changed' | 'self' | 'no_account' }[]>`select app.console_admin_set_disabled(${who.owner}, ${owner}, ${disabled === 'true'}) as result`;
      return {
        // post, redirect, get: a reload of the account page posts nothing again
        changed: { message: '', redirect: `${accountPath(owner)}?done=${disabled === 'true' ? 'disabled' : 'enabled'}`, seeOther: true },
        self: { message: 'You cannot disable your own account; nothing was changed.', status: 409 },
        no_account: { message: 'There is no such account; nothing was changed.', status: 404 },
      }[row!.result];
    },
  }),
  role: accountAction({
    shape: { role: z.enum(['user', 'admin'], 'Unknown role.') },
    act: async ({ sql }, who, { owner, role }) => {
      const [row] = await sql<{ result: 'changed' | 'last_admin' | 'no_account' }[]>`select app.console_admin_set_role(${owner}, ${role}) as result`;
      // no operator pages any more for whoever made itself a user
      if (row!.result === 'changed' && owner === who.owner && role !== 'admin') return { message: '', redirect: '/console/keys' };
      return {
        changed: { message: `The account is now ${role === 'admin' ? 'an admin' : 'a user'}.` },
        last_admin: { message: 'This is the last enabled admin: make another account admin first. Nothing was changed.', status: 409 },
        no_account: { message: 'There is no such account; nothing was changed.', status: 404 },
      }[row!.result];
    },
  }),
};

/** This month's top accounts and endpoints. */
async function usagePage({ sql, page }: Kit, ctx: Context, who: Account) {
  const [rows, endpoints] = await Promise.all([
    sql<TopAccount[]>`select * from app.console_admin_top_accounts(${TOP_ACCOUNTS})`,
    sql<TopEndpoint[]>`select * from app.console_admin_top_endpoints(${TOP_ACCOUNTS})`,
  ]);
  page(ctx, 'Usage', usageView(rows, endpoints, new Date().toISOString().slice(0, 7)), 200, who);
}
