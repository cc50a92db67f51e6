// The developer console at /console: sign-up, e-mail verification, sign-in and out, password reset,
// the account's sessions, and its Data API keys. Server-rendered pages (./html.ts), forms posted with
// a CSRF token, the logic in SQL (sql/functions/900_console.sql). Mounted by the composition root
// (src/service.ts) beside the API; CONSOLE=off mounts nothing.
import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { emailConfigured } from '../config.ts';
import type { Deps } from '../http/admission.ts';
import { createKey, MAX_ROTATION_GRACE_HOURS, revokeKey, rotateKey } from '../keys.ts';
import { accountTaken } from './accounts.ts';
import type { PlanName } from '../plans.ts';
import { email as emailFormat } from '../validators.ts';
import { field, form, html, layout, notice, type Html } from './html.ts';
import { cookieNames, csrfFor, csrfMatches, newToken, readCookie, safeNext, setCookie, tokenHash } from './session.ts';

const ASSETS = { 'console.css': 'text/css; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8', 'icon.svg': 'image/svg+xml' } as const;
const LINK_HOURS = { verify_email: 48, reset_password: 2, invite: 7 * 24 } as const;

interface Account {
  session_id: string;
  owner: string;
  email: string;
  role: string;
}

type Errors = Record<string, string>;

const ACCOUNT_EXISTS = 'An account with this address exists: sign in, or reset its password.';

const password = z.string().min(12, 'Use at least 12 characters.').max(200, 'Use at most 200 characters.');
const keyName = z.string().trim().min(1, 'Give the key a name.').max(100, 'Use at most 100 characters.');
const keyId = z.string().regex(/^\d{1,18}$/, 'Unknown key.');

/** A form refused inside a transaction (thrown to roll it back), with the errors to show. */
class Refused extends Error {
  readonly errors: Errors;
  constructor(errors: Errors) {
    super('refused');
    this.errors = errors;
  }
}

/** zod's issues as one message per field, shown beside it */
function fieldErrors(error: z.ZodError): Errors {
  const errors: Errors = {};
  for (const issue of error.issues) errors[String(issue.path[0] ?? 'form')] ??= issue.message;
  return errors;
}

export function consoleRouter(deps: Deps): Router {
  const router = new Router({ prefix: '/console' });
  const { sql, config } = deps;
  if (config.CONSOLE === 'off') return router;
  const cookies = cookieNames(config);
  // checked against when the address is unknown, so that a wrong address costs as long as a wrong password
  const dummyHash = hash(newToken());
  const idle = `${config.CONSOLE_SESSION_IDLE_MINUTES} minutes`;
  const absolute = `${config.CONSOLE_SESSION_DAYS} days`;
  const plans = config.CONSOLE_SELF_SERVICE_PLANS as [PlanName, ...PlanName[]];
  const signUpForm = z.object({ email: emailFormat, password });
  const signInForm = z.object({ email: emailFormat, password: z.string().min(1, 'Enter your password.').max(200) });
  const createForm = z.object({ name: keyName, plan: z.enum(plans, `Choose one of: ${plans.join(', ')}.`) });

  /** The live session of the request (touched), or null. */
  async function account(ctx: Context): Promise<Account | null> {
    if (ctx.state.consoleAccount !== undefined) return ctx.state.consoleAccount;
    const token = readCookie(ctx, cookies.session);
    const [row] = token ? await sql<Account[]>`select * from app.console_session(${tokenHash(token)})` : [];
    return (ctx.state.consoleAccount = row ?? null);
  }

  /** The token forms are tied to: the session's, else a pre-session cookie's (made on first need). */
  function formToken(ctx: Context): string {
    const existing = readCookie(ctx, cookies.session) ?? readCookie(ctx, cookies.pre);
    if (existing) return existing;
    const made = newToken();
    setCookie(ctx, cookies.pre, made, cookies.secure);
    ctx.state.consoleFormToken = made;
    return made;
  }

  function page(ctx: Context, title: string, body: Html, status = 200, who: Account | null = ctx.state.consoleAccount ?? null) {
    const nonce = randomBytes(16).toString('base64');
    const token = ctx.state.consoleFormToken ?? formToken(ctx);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    // nothing of another origin, no inline script or style; the one script carries this response's nonce
    ctx.set('Content-Security-Policy', [
      "default-src 'none'", `script-src 'self' 'nonce-${nonce}'`, "style-src 'self'", "img-src 'self'", "connect-src 'self'",
      "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'",
    ].join('; '));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = layout({ title, body, email: who?.email, csrf: csrfFor(token), nonce });
  }

  const csrf = (ctx: Context) => csrfFor(ctx.state.consoleFormToken ?? formToken(ctx));

  /** A form's fields, after its CSRF check: null when the check failed (the 403 page is written). */
  async function posted(ctx: Context): Promise<Record<string, string> | null> {
    const fields = await readForm(ctx, config.MAX_BODY_BYTES);
    const token = readCookie(ctx, cookies.session) ?? readCookie(ctx, cookies.pre);
    if (!csrfMatches(token, fields.csrf)) {
      page(ctx, 'This form has expired', html`${notice('This form is out of date: it was opened before you signed in or out, or in another tab. Nothing was changed.', 'error')}
<p><a href="${ctx.path}">Open the page again</a> and retry.</p>`, 403);
      return null;
    }
    return fields;
  }

  /** A signed-in page: the account, or a redirect to sign-in (then back here) / the stale-form message. */
  async function signedIn(ctx: Context): Promise<Account | null> {
    const who = await account(ctx);
    if (who) return who;
    if (ctx.method === 'GET') {
      ctx.redirect(`/console/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
    } else {
      page(ctx, 'Signed out', html`${notice('Your session has ended (signed out, expired or revoked), so nothing was changed.', 'error')}
<p><a href="/console/sign-in?next=${encodeURIComponent(ctx.path)}">Sign in again</a>.</p>`, 403);
    }
    return null;
  }

  async function openSession(ctx: Context, owner: string, next: string) {
    const token = newToken();
    await sql`select app.console_open_session(${owner}, ${tokenHash(token)}, ${ctx.get('user-agent').slice(0, 200)}, ${idle}::interval, ${absolute}::interval)`;
    setCookie(ctx, cookies.session, token, cookies.secure, config.CONSOLE_SESSION_DAYS * 86_400);
    ctx.redirect(safeNext(next));
  }

  /** Issues a link and queues its e-mail in the caller's transaction (the outbox of src/mail). */
  async function sendLink(tx: typeof sql, purpose: 'verify_email' | 'reset_password', owner: string, email: string) {
    const token = newToken();
    await tx`select app.console_issue_token(${purpose}, ${tokenHash(token)}, ${owner}, ${email}, ${`${LINK_HOURS[purpose]} hours`}::interval)`;
    const path = `/console/${purpose === 'verify_email' ? 'verify' : 'reset/set'}?token=${token}`;
    await tx`select app.queue_email(${owner}, 'console.link', ${tx.json({ purpose, path, hours: LINK_HOURS[purpose] })})`;
  }

  for (const [name, type] of Object.entries(ASSETS)) {
    router.get(`/assets/${name}`, async (ctx) => {
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = await readFile(new URL(`./assets/${name}`, import.meta.url));
    });
  }

  router.get('/', async (ctx) => ctx.redirect((await account(ctx)) ? '/console/keys' : '/console/sign-in'));

  // ---- sign-in and out
  const signInPage = (ctx: Context, values: Record<string, string> = {}, errors: Errors = {}, status = 200, message?: Html) =>
    page(ctx, 'Sign in', html`${message ?? ''}${form('/console/sign-in', csrf(ctx), [
      field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'username' }),
      field({ name: 'password', label: 'Password', type: 'password', error: errors.password, autocomplete: 'current-password' }),
      html`<input type="hidden" name="next" value="${safeNext(values.next)}">`,
    ], 'Sign in')}
<p><a href="/console/reset">Forgot your password?</a>${config.CONSOLE_SIGNUP === 'open' ? html` · <a href="/console/sign-up">Make an account</a>` : ''}</p>`, status, null);

  router.get('/sign-in', (ctx) => signInPage(ctx, { next: String(ctx.query.next ?? '') }));
  router.post('/sign-in', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    const parsed = signInForm.safeParse(fields);
    if (!parsed.success) return signInPage(ctx, fields, fieldErrors(parsed.error), 422);
    const { email, password: given } = parsed.data;
    const [left] = await sql<{ ok: boolean }[]>`select app.console_attempts_left(${email}, ${ctx.ip || 'unknown'}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_CLIENT}) as ok`;
    if (!left!.ok) {
      ctx.set('Retry-After', '60');
      return signInPage(ctx, fields, {}, 429, notice('Too many failed sign-ins; wait a minute and try again.', 'error'));
    }
    const [candidate] = await sql<{ owner: string; password_hash: string | null; email_verified_at: Date | null }[]>`select * from app.console_sign_in_candidate(${email})`;
    const matches = await verify(candidate?.password_hash ?? (await dummyHash), given);
    if (!candidate?.password_hash || !matches) {
      await sql`select app.console_count_attempt(${email}, ${ctx.ip || 'unknown'})`;
      return signInPage(ctx, fields, { password: 'The e-mail address or the password is wrong.' }, 401);
    }
    if (!candidate.email_verified_at) {
      return signInPage(ctx, fields, { email: 'Confirm this address first: open the link in the e-mail we sent.' }, 403);
    }
    await openSession(ctx, candidate.owner, fields.next ?? '');
  });

  router.post('/sign-out', async (ctx) => {
    if (!(await posted(ctx))) return;
    const who = await account(ctx);
    if (who) await sql`select app.console_revoke_sessions(${who.owner}, ${who.session_id})`;
    setCookie(ctx, cookies.session, '', cookies.secure, 0);
    ctx.redirect('/console/sign-in');
  });

  // ---- sign-up and verification
  const signUpAllowed = () => config.CONSOLE_SIGNUP === 'open';
  const invitesAllowed = () => config.CONSOLE_SIGNUP !== 'closed';
  const signUpPage = (ctx: Context, values: Record<string, string> = {}, errors: Errors = {}, status = 200) =>
    page(ctx, 'Make an account', emailConfigured(config)
      ? form('/console/sign-up', csrf(ctx), [
        field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'email' }),
        field({ name: 'password', label: 'Password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
      ], 'Make account')
      : notice('This service cannot send e-mail (SMTP is not configured), so no account can be made here: ask the operator.', 'error'), status);

  router.get('/sign-up', (ctx) => (signUpAllowed() ? signUpPage(ctx) : closedSignUp(ctx)));
  router.post('/sign-up', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    if (!signUpAllowed()) return closedSignUp(ctx);
    if (!emailConfigured(config)) return signUpPage(ctx, fields, {}, 503);
    const parsed = signUpForm.safeParse(fields);
    if (!parsed.success) return signUpPage(ctx, fields, fieldErrors(parsed.error), 422);
    const passwordHash = await hash(parsed.data.password);
    const made = await sql.begin(async (tx) => {
      const [taken] = await tx`select 1 from app.owners where lower(email) = lower(${parsed.data.email}) and role is not null`;
      if (taken) return false;
      const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${parsed.data.email}, 'user', ${passwordHash}) as owner`;
      await sendLink(tx as unknown as typeof sql, 'verify_email', row!.owner, parsed.data.email);
      return true;
    }).catch((error) => {
      // the same address signing up twice at once: the second meets the unique index
      if (accountTaken(error)) return false;
      throw error;
    });
    if (!made) return signUpPage(ctx, fields, { email: ACCOUNT_EXISTS }, 409);
    page(ctx, 'Check your e-mail', notice(html`We sent a link to <strong>${parsed.data.email}</strong>. Open it to confirm the address, then sign in.`));
  });

  // ---- an invite (mdapi invite): the account of the invited address, verified, signed in at once
  const invitePage = (ctx: Context, token: string, values: Record<string, string> = {}, errors: Errors = {}, status = 200) =>
    page(ctx, 'Make an account', form('/console/invite', csrf(ctx), [
      html`<input type="hidden" name="token" value="${token}">`,
      field({ name: 'email', label: 'E-mail address (the invited one)', type: 'email', value: values.email, error: errors.email, autocomplete: 'email' }),
      field({ name: 'password', label: 'Password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
    ], 'Make account'), status);
  router.get('/invite', (ctx) => (invitesAllowed() ? invitePage(ctx, String(ctx.query.token ?? '')) : closedSignUp(ctx)));
  router.post('/invite', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    if (!invitesAllowed()) return closedSignUp(ctx);
    const token = String(fields.token ?? '').slice(0, 100);
    const parsed = signUpForm.safeParse(fields);
    if (!parsed.success) return invitePage(ctx, token, fields, fieldErrors(parsed.error), 422);
    const passwordHash = await hash(parsed.data.password);
    const outcome = await sql.begin(async (tx) => {
      const [invite] = await tx<{ email: string }[]>`select * from app.console_use_token('invite', ${tokenHash(token)})`;
      if (!invite) return { gone: true } as const;
      // a refusal rolls back, so the invite stays usable
      if (invite.email.toLowerCase() !== parsed.data.email.toLowerCase()) throw new Refused({ email: 'This invite is for another address.' });
      const [taken] = await tx`select 1 from app.owners where lower(email) = lower(${parsed.data.email}) and role is not null`;
      if (taken) throw new Refused({ email: ACCOUNT_EXISTS });
      const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${invite.email}, 'user', ${passwordHash}) as owner`;
      await tx`update app.owners set email_verified_at = now() where owner = ${row!.owner}`;
      return { owner: row!.owner } as const;
    }).catch((error) => {
      if (error instanceof Refused) return { errors: error.errors } as const;
      if (accountTaken(error)) return { errors: { email: ACCOUNT_EXISTS } } as const;
      throw error;
    });
    if ('gone' in outcome) return page(ctx, 'Link not valid', notice('This invite is not valid: it was used already, has expired, or is incomplete.', 'error'), 410);
    if ('errors' in outcome) return invitePage(ctx, token, fields, outcome.errors, 422);
    await openSession(ctx, outcome.owner, '/console/keys');
  });

  function closedSignUp(ctx: Context) {
    page(ctx, 'Make an account', notice(config.CONSOLE_SIGNUP === 'invite' ? 'Accounts on this service are made by invitation: open the link of your invite.' : 'Accounts on this service are made by its operator.', 'error'), 403);
  }

  router.get('/verify', async (ctx) => {
    const token = String(ctx.query.token ?? '');
    const [row] = token ? await sql<{ owner: string | null }[]>`select app.console_verify_email(${tokenHash(token)}) as owner` : [];
    if (!row?.owner) return page(ctx, 'Link not valid', notice('This link is not valid: it was used already, has expired, or is incomplete.', 'error'), 410);
    page(ctx, 'Address confirmed', html`${notice('Your e-mail address is confirmed.')}<p><a href="/console/sign-in">Sign in</a></p>`);
  });

  // ---- password reset (also the set-password link of mdapi create-account)
  const resetRequestPage = (ctx: Context, values: Record<string, string> = {}, errors: Errors = {}, status = 200, message?: Html) =>
    page(ctx, 'Reset your password', html`${message ?? ''}${form('/console/reset', csrf(ctx), [
      field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'username' }),
    ], 'Send a reset link')}`, status);
  router.get('/reset', (ctx) => resetRequestPage(ctx));
  router.post('/reset', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    if (!emailConfigured(config)) return resetRequestPage(ctx, fields, {}, 503, notice('This service cannot send e-mail: ask the operator for a sign-in link.', 'error'));
    const parsed = z.object({ email: emailFormat }).safeParse(fields);
    if (!parsed.success) return resetRequestPage(ctx, fields, fieldErrors(parsed.error), 422);
    const client = ctx.ip || 'unknown';
    const [left] = await sql<{ ok: boolean }[]>`select app.console_attempts_left(${parsed.data.email}, ${client}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_CLIENT}) as ok`;
    if (!left!.ok) return resetRequestPage(ctx, fields, {}, 429, notice('Too many requests; wait a minute and try again.', 'error'));
    await sql.begin(async (tx) => {
      // every request counts, so the form cannot be used to flood an inbox
      await tx`select app.console_count_attempt(${parsed.data.email}, ${client})`;
      const [candidate] = await tx<{ owner: string }[]>`select owner from app.console_sign_in_candidate(${parsed.data.email})`;
      if (candidate) await sendLink(tx as unknown as typeof sql, 'reset_password', candidate.owner, parsed.data.email);
    });
    // the same answer whether or not the address has an account
    page(ctx, 'Check your e-mail', notice('If this address has an account, a link to set a new password is on its way.'));
  });

  const setPasswordPage = (ctx: Context, token: string, errors: Errors = {}, status = 200) =>
    page(ctx, 'Set a new password', form('/console/reset/set', csrf(ctx), [
      html`<input type="hidden" name="token" value="${token}">`,
      field({ name: 'password', label: 'New password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
    ], 'Set password'), status);
  router.get('/reset/set', (ctx) => setPasswordPage(ctx, String(ctx.query.token ?? '')));
  router.post('/reset/set', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    const parsed = z.object({ token: z.string().min(1).max(100), password }).safeParse(fields);
    if (!parsed.success) return setPasswordPage(ctx, fields.token ?? '', fieldErrors(parsed.error), 422);
    const passwordHash = await hash(parsed.data.password);
    const owner = await sql.begin(async (tx) => {
      const [used] = await tx<{ owner: string; email: string }[]>`select * from app.console_use_token('reset_password', ${tokenHash(parsed.data.token)})`;
      if (!used) return null;
      await tx`select app.console_set_password(${used.owner}, ${passwordHash})`;
      // the link reached this address (or the operator handed it out): the address is verified
      await tx`update app.owners set email_verified_at = coalesce(email_verified_at, now()) where owner = ${used.owner} and email = ${used.email}`;
      return used.owner;
    });
    if (!owner) return page(ctx, 'Link not valid', notice('This link is not valid: it was used already, has expired, or is incomplete.', 'error'), 410);
    await openSession(ctx, owner, '/console/keys');
  });

  // ---- the account: sessions
  router.get('/account', async (ctx) => {
    const who = await signedIn(ctx);
    if (!who) return;
    await accountPage(ctx, who);
  });

  async function accountPage(ctx: Context, who: Account, message?: Html) {
    const sessions = await sql<{ id: string; user_agent: string; created_at: Date; last_seen_at: Date; expires_at: Date }[]>`select * from app.console_sessions_of(${who.owner})`;
    page(ctx, 'Account', html`${message ?? ''}<p>Signed in as <strong>${who.email}</strong> (${who.role}).</p>
<h2>Sessions</h2>
<div class="table"><table><thead><tr><th>Browser</th><th>Signed in</th><th>Last used</th><th></th></tr></thead><tbody>
${sessions.map((s) => html`<tr><td data-label="Browser">${s.user_agent || 'unknown'}${s.id === who.session_id ? ' (this one)' : ''}</td><td data-label="Signed in">${when(s.created_at)}</td><td data-label="Last used">${when(s.last_seen_at)}</td>
<td>${form('/console/sessions/revoke', csrf(ctx), html`<input type="hidden" name="session" value="${s.id}">`, 'Revoke', 'inline')}</td></tr>`)}
</tbody></table></div>
${form('/console/sessions/revoke-all', csrf(ctx), [], 'Sign out everywhere')}`, 200, who);
  }

  router.post('/sessions/revoke', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    const id = keyId.safeParse(fields!.session);
    if (id.success) await sql`select app.console_revoke_sessions(${who.owner}, ${id.data})`;
    if (id.success && id.data === who.session_id) return ctx.redirect('/console/sign-in');
    await accountPage(ctx, who, notice('Session revoked.'));
  });
  router.post('/sessions/revoke-all', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    await sql`select app.console_revoke_sessions(${who.owner}, null)`;
    setCookie(ctx, cookies.session, '', cookies.secure, 0);
    ctx.redirect('/console/sign-in');
  });

  // ---- Data API keys
  async function keysPage(ctx: Context, who: Account, extra: { message?: Html; values?: Record<string, string>; errors?: Errors; renameError?: { key: string; name: string; error: string }; status?: number } = {}) {
    const keys = await sql<{ id: string; name: string | null; prefix: string; plan: string; created_at: Date; last_used_at: Date | null; requests_this_month: string; retires_at: Date | null }[]>`
      select * from app.console_keys(${who.owner}, 'data-api')`;
    const token = csrf(ctx);
    const { values = {}, errors = {} } = extra;
    page(ctx, 'Data API keys', html`${extra.message ?? ''}
<h2>Your keys</h2>
${keys.length === 0 ? html`<p>No key yet.</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Prefix</th><th>Plan</th><th>Created</th><th>Last used</th><th>Requests this month</th><th>Actions</th></tr></thead><tbody>
${keys.map((key) => html`<tr><td data-label="Name">${key.name ?? '(no name)'}</td><td data-label="Prefix"><code>${key.prefix}</code></td><td data-label="Plan">${key.plan}</td><td data-label="Created">${when(key.created_at)}</td><td data-label="Last used">${key.last_used_at ? when(key.last_used_at) : 'never'}</td><td data-label="Requests this month">${key.requests_this_month}${key.retires_at ? html`<br><strong>Retires ${when(key.retires_at)}</strong> (rotated)` : ''}</td>
<td class="row-actions">${form('/console/keys/rename', token, renameField(key.id, key.name, extra.renameError?.key === key.id ? extra.renameError : undefined), 'Rename')}
${key.retires_at ? '' : form('/console/keys/rotate', token, rotateFields(key.id), `Rotate ${key.prefix}`)}
${form('/console/keys/revoke', token, html`<input type="hidden" name="key" value="${key.id}">`, `Revoke ${key.prefix}`, 'danger')}</td></tr>`)}
</tbody></table></div>`}
<h2>Create a key</h2>
${keys.length >= config.CONSOLE_MAX_KEYS ? html`<p>You hold ${keys.length} keys, the most this service allows (${config.CONSOLE_MAX_KEYS}): revoke one to create another.</p>` : form('/console/keys', token, [
    field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
    html`<div class="field${errors.plan ? ' invalid' : ''}"><label for="f-plan">Plan</label>${errors.plan ? html`<p class="error" id="f-plan-error">Error: ${errors.plan}</p>` : ''}
<select id="f-plan" name="plan">${plans.map((plan) => html`<option${values.plan === plan ? html` selected` : ''}>${plan}</option>`)}</select></div>`,
  ], 'Create key')}`, extra.status ?? 200, who);
  }

  router.get('/keys', async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await keysPage(ctx, who);
  });
  router.post('/keys', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    const parsed = createForm.safeParse(fields);
    if (!parsed.success) return keysPage(ctx, who, { values: fields!, errors: fieldErrors(parsed.error), status: 422 });
    const created = await sql.begin(async (tx) => {
      // one creation at a time per account, so two tabs cannot pass the limit together
      await tx`select 1 from app.owners where owner = ${who.owner} for update`;
      const [count] = await tx<{ n: number }[]>`select count(*)::int as n from app.console_keys(${who.owner}, 'data-api')`;
      if (count!.n >= config.CONSOLE_MAX_KEYS) return null;
      return createKey(tx as unknown as typeof sql, { plan: parsed.data.plan, owner: who.owner, scope: 'data-api', name: parsed.data.name });
    });
    if (!created) return keysPage(ctx, who, { values: fields!, errors: { name: `You hold the most keys allowed (${config.CONSOLE_MAX_KEYS}).` }, status: 409 });
    await keysPage(ctx, who, { message: shownOnce(created.key) });
  });
  router.post('/keys/rotate', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    const parsed = z.object({ key: keyId, grace: z.enum(GRACE_CHOICES.map(([hours]) => String(hours)) as [string, ...string[]]) }).safeParse(fields);
    const rotated = parsed.success ? await rotateKey(sql, parsed.data.key, who.owner, Number(parsed.data.grace)) : null;
    if (!rotated) return keysPage(ctx, who, { message: notice('That key is gone (revoked or rotated in another tab?); nothing was changed.', 'error'), status: 404 });
    const old = rotated.retiresAt.getTime() <= Date.now() ? 'The old key is refused from now on.' : `The old key keeps working until ${when(rotated.retiresAt)}, then is refused.`;
    await keysPage(ctx, who, { message: shownOnce(rotated.key, old) });
  });
  router.post('/keys/rename', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    const parsed = z.object({ key: keyId, name: keyName }).safeParse(fields);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error);
      if (errors.key) return keysPage(ctx, who, { message: notice('That key is gone (revoked in another tab?); nothing was changed.', 'error'), status: 404 });
      return keysPage(ctx, who, { renameError: { key: fields!.key!, name: fields!.name ?? '', error: errors.name! }, status: 422 });
    }
    const [row] = await sql<{ ok: boolean }[]>`select app.console_rename_key(${who.owner}, ${parsed.data.key}, ${parsed.data.name}) as ok`;
    await keysPage(ctx, who, row!.ok ? { message: notice('Key renamed.') } : { message: notice('That key is gone (revoked in another tab?); nothing was changed.', 'error'), status: 404 });
  });
  router.post('/keys/revoke', async (ctx) => {
    const fields = await posted(ctx);
    const who = fields && (await signedIn(ctx));
    if (!who) return;
    const id = keyId.safeParse(fields!.key);
    const revoked = id.success ? await revokeKey(sql, id.data, who.owner) : 0;
    await keysPage(ctx, who, revoked ? { message: notice('Key revoked: the API refuses it from now on.') } : { message: notice('That key is gone (revoked in another tab?); nothing was changed.', 'error'), status: 404 });
  });

  return router;
}

/** How long a rotated key may keep working beside its successor: [hours, label], up to MAX_ROTATION_GRACE_HOURS. */
const GRACE_CHOICES: [number, string][] = [[0, 'none: refuse it now'], [1, '1 hour'], [24, '1 day'], [72, '3 days'], [MAX_ROTATION_GRACE_HOURS, '7 days']];

/** A new key, shown this once with its copy button (and what became of the key it replaces). */
const shownOnce = (key: string, replaced?: string) => html`<section class="notice" aria-labelledby="new-key"><h2 id="new-key">Your new key</h2>
<p>Copy it now: it is shown this once and cannot be shown again.${replaced ? ` ${replaced}` : ''}</p>
<p class="secret"><code id="new-key-value">${key}</code> <button type="button" class="secondary" data-copy="new-key-value" hidden>Copy</button></p></section>`;

/** A key's rotate fields: how long the old key keeps working. */
const rotateFields = (id: string) => html`<input type="hidden" name="key" value="${id}"><div class="field"><label for="grace-${id}">Old key works for</label>
<select id="grace-${id}" name="grace">${GRACE_CHOICES.map(([hours, label]) => html`<option value="${String(hours)}"${hours === 24 ? html` selected` : ''}>${label}</option>`)}</select></div>`;

/** A key's rename field, with the error of a refused rename beside it. */
const renameField = (id: string, name: string | null, refused?: { name: string; error: string }) =>
  html`<input type="hidden" name="key" value="${id}">${field({ name: 'name', id: `rename-${id}`, label: 'New name', value: refused ? refused.name : (name ?? ''), error: refused?.error })}`;

const when = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** An application/x-www-form-urlencoded body (the API's parser takes JSON only), at most `limit` bytes. */
async function readForm(ctx: Context, limit: number): Promise<Record<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded')) return {};
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) return {};
    chunks.push(chunk as Buffer);
  }
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) fields[name] ??= value;
  return fields;
}
