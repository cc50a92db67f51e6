// The account page: who is signed in, the account's sessions (revoke one, sign out everywhere) and
// the browsers notified of its push alarms (./push.ts). Markup in ./account.views.ts.
import type { Context } from 'koa';
import { notice, type Html } from './html.ts';
import { rowId, type Account, type Fields, type Kit, type PageGroup } from './kit.ts';
import { accountView, type SessionRow } from './account.views.ts';
import { pushBrowsers, type PushSection, type ShowAccount } from './push.ts';

export const accountPages: PageGroup = (routes, kit) => {
  const show = (ctx: Context, who: Account, message?: Html, status?: number) => accountPage(kit, pushSection, ctx, who, message, status);
  const pushSection = pushBrowsers(routes, kit, show);
  routes.signedIn.get('/account', (ctx, who) => show(ctx, who));
  routes.signedIn.post('/sessions/revoke', (ctx, who, fields) => revokeSession(kit, show, ctx, who, fields));
  routes.signedIn.post('/sessions/revoke-all', (ctx, who) => signOutEverywhere(kit, ctx, who));
};

async function accountPage({ sql, csrf, page }: Kit, pushSection: PushSection, ctx: Context, who: Account, message?: Html, status = 200) {
  const sessions = await sql<SessionRow[]>`select * from app.console_sessions_of(${who.owner})`;
  page(ctx, 'Account', accountView(who, sessions, csrf(ctx), await pushSection(ctx, who), message), status, who);
}

async function revokeSession({ sql }: Kit, show: ShowAccount, ctx: Context, who: Account, fields: Fields) {
  const id = rowId.safeParse(fields.session);
  const [row] = id.success ? await sql<{ revoked: number }[]>`select app.console_revoke_sessions(${who.owner}, ${id.data}) as revoked` : [];
  if (id.success && id.data === who.session_id) return ctx.redirect('/console/sign-in');
  // another account's session, or one ended meanwhile: nothing was revoked, and the page says so
  if (!row?.revoked) return show(ctx, who, notice('That is not a working session of this account (signed out or revoked already?); nothing was revoked.', 'error'), 404);
  await show(ctx, who, notice('Session revoked.'));
}

async function signOutEverywhere({ sql, endSession }: Kit, ctx: Context, who: Account) {
  await sql`select app.console_revoke_sessions(${who.owner}, null)`;
  endSession(ctx);
  ctx.redirect('/console/sign-in');
}
