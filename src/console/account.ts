// The account page: who is signed in, the account's sessions (revoke one, sign out everywhere) and
// the browsers notified of its push alarms (./push.ts).
import type { Context } from 'koa';
import { form, html, notice, type Html } from './html.ts';
import { rowId, when, type Account, type PageGroup } from './kit.ts';
import { pushBrowsers } from './push.ts';

export const accountPages: PageGroup = (router, kit) => {
  const { sql, csrf, page, signedIn, signedInForm, endSession } = kit;
  const pushSection = pushBrowsers(router, kit, (ctx, who, message, status) => accountPage(ctx, who, message, status));
  // ---- the account: sessions
  router.get('/account', async (ctx) => {
    const who = await signedIn(ctx);
    if (!who) return;
    await accountPage(ctx, who);
  });

  async function accountPage(ctx: Context, who: Account, message?: Html, status = 200) {
    const sessions = await sql<{ id: string; user_agent: string; created_at: Date; last_seen_at: Date; expires_at: Date }[]>`select * from app.console_sessions_of(${who.owner})`;
    page(ctx, 'Account', html`${message ?? ''}<p>Signed in as <strong>${who.email}</strong> (${who.role}).</p>
<h2>Sessions</h2>
<div class="table"><table><thead><tr><th>Browser</th><th>Signed in</th><th>Last used</th><th></th></tr></thead><tbody>
${sessions.map((s) => html`<tr><td data-label="Browser">${s.user_agent || 'unknown'}${s.id === who.session_id ? ' (this one)' : ''}</td><td data-label="Signed in">${when(s.created_at)}</td><td data-label="Last used">${when(s.last_seen_at)}</td>
<td>${form('/console/sessions/revoke', csrf(ctx), html`<input type="hidden" name="session" value="${s.id}">`, 'Revoke', 'inline')}</td></tr>`)}
</tbody></table></div>
${form('/console/sessions/revoke-all', csrf(ctx), [], 'Sign out everywhere')}
${await pushSection(ctx, who)}`, status, who);
  }

  router.post('/sessions/revoke', async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    const id = rowId.safeParse(fields.session);
    const [row] = id.success ? await sql<{ revoked: number }[]>`select app.console_revoke_sessions(${who.owner}, ${id.data}) as revoked` : [];
    if (id.success && id.data === who.session_id) return ctx.redirect('/console/sign-in');
    // another account's session, or one ended meanwhile: nothing was revoked, and the page says so
    if (!row?.revoked) return accountPage(ctx, who, notice('That is not a working session of this account (signed out or revoked already?); nothing was revoked.', 'error'), 404);
    await accountPage(ctx, who, notice('Session revoked.'));
  });
  router.post('/sessions/revoke-all', async (ctx) => {
    const form = await signedInForm(ctx);
    if (!form) return;
    const { fields, who } = form;
    await sql`select app.console_revoke_sessions(${who.owner}, null)`;
    endSession(ctx);
    ctx.redirect('/console/sign-in');
  });

};
