// Console sign-in and out, sign-up (CONSOLE_SIGNUP), invites, e-mail verification and password
// reset (also the set-password link of mdapi create-account). Passwords are argon2id hashes.
// Sign-up and reset answer the same, in the same time, whether or not the address has an account:
// what differs (the e-mail, the account made) is done after the answer. Markup in ./auth.views.ts,
// the e-mails in ./auth.mail.ts. These forms are posted signed out: their CSRF token is tied to the
// pre-session cookie (./kit.ts).
import type { Context } from 'koa';
import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { emailConfigured } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { email as emailFormat } from '../validators.ts';
import { accountTaken } from './accounts.ts';
import { linkMail, type LinkMail } from './auth.mail.ts';
import { closedSignUpView, inviteView, linkNotValid, noEmailView, notSent, resetRequestView, setPasswordView, signInView, signUpView, tooMany, type Typed } from './auth.views.ts';
import { html, notice, type Html } from './html.ts';
import { fieldErrors, Refused, type Errors, type Fields, type Kit, type PageGroup } from './kit.ts';
import { newToken, tokenHash } from './session.ts';

const ACCOUNT_EXISTS = 'An account with this address exists: sign in, or reset its password.';
export const password = z.string().min(12, 'Use at least 12 characters.').max(200, 'Use at most 200 characters.');
const signUpForm = z.object({ email: emailFormat, password });
const signInForm = z.object({ email: emailFormat, password: z.string().min(1, 'Enter your password.').max(200) });
const resetForm = z.object({ email: emailFormat });
const setPasswordForm = z.object({ token: z.string().min(1).max(100), password });

/** What the signed-out forms share: the kit, the link e-mails, and a hash to check a wrong address against. */
interface Auth {
  kit: Kit;
  mail: LinkMail;
  /** checked against when the address is unknown, so that a wrong address costs as long as a wrong password */
  dummyHash: Promise<string>;
}

export const authPages: PageGroup = (routes, kit) => {
  const auth: Auth = { kit, mail: linkMail(kit), dummyHash: hash(newToken()) };
  const { config } = kit;
  routes.get('/sign-in', (ctx) => signInPage(kit, ctx, { values: { next: String(ctx.query.next ?? '') } }));
  routes.post('/sign-in', (ctx, fields) => signIn(auth, ctx, fields));
  routes.post('/sign-out', (ctx) => signOut(kit, ctx));
  routes.get('/sign-up', (ctx) => (config.CONSOLE_SIGNUP === 'open' ? signUpPage(kit, ctx) : closedSignUp(kit, ctx)));
  routes.post('/sign-up', (ctx, fields) => signUp(auth, ctx, fields));
  routes.get('/invite', (ctx) => (config.CONSOLE_SIGNUP !== 'closed' ? invitePage(kit, ctx, String(ctx.query.token ?? '')) : closedSignUp(kit, ctx)));
  routes.post('/invite', (ctx, fields) => acceptInvite(kit, ctx, fields));
  routes.get('/verify', (ctx) => verifyEmail(kit, ctx));
  routes.get('/reset', (ctx) => resetRequestPage(kit, ctx));
  routes.post('/reset', (ctx, fields) => requestReset(auth, ctx, fields));
  routes.get('/reset/set', (ctx) => setPasswordPage(kit, ctx, String(ctx.query.token ?? '')));
  routes.post('/reset/set', (ctx, fields) => setPassword(kit, ctx, fields));
};

const signInPage = ({ page, csrf, config }: Kit, ctx: Context, typed: Typed = {}, status = 200) =>
  page(ctx, 'Sign in', signInView(csrf(ctx), config.CONSOLE_SIGNUP === 'open', typed), status, null);
const signUpPage = ({ page, csrf, config }: Kit, ctx: Context, typed: Typed = {}, status = 200) =>
  page(ctx, 'Make an account', emailConfigured(config) ? signUpView(csrf(ctx), typed) : noEmailView(), status);
const invitePage = ({ page, csrf }: Kit, ctx: Context, token: string, typed: Typed = {}, status = 200) =>
  page(ctx, 'Make an account', inviteView(csrf(ctx), token, typed), status);
const closedSignUp = ({ page, config }: Kit, ctx: Context) => page(ctx, 'Make an account', closedSignUpView(config.CONSOLE_SIGNUP === 'invite'), 403);
const resetRequestPage = ({ page, csrf }: Kit, ctx: Context, typed: Typed = {}, status = 200) =>
  page(ctx, 'Reset your password', resetRequestView(csrf(ctx), typed), status);
const setPasswordPage = ({ page, csrf }: Kit, ctx: Context, token: string, errors: Errors = {}, status = 200) =>
  page(ctx, 'Set a new password', setPasswordView(csrf(ctx), token, errors), status);

/**
 * Work done once the answer is written, so that the answer's time tells nothing of it (such as
 * whether an address has an account); a failure is logged, never shown.
 */
function afterAnswer({ deps }: Kit, ctx: Context, what: string, work: () => Promise<unknown>) {
  ctx.res.once('close', () => {
    work().catch((error: unknown) => deps.logger?.error({ err: error }, `console ${what}: the work after the answer failed`));
  });
}

/** Whether a client may try again: failed sign-ins (and form requests) per address and per client under the limits. */
async function attemptsLeft({ sql, config }: Kit, ctx: Context, email: string) {
  const [left] = await sql<{ ok: boolean }[]>`select app.console_attempts_left(${email}, ${ctx.ip || 'unknown'}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_CLIENT}) as ok`;
  if (!left!.ok) ctx.set('Retry-After', '60');
  return left!.ok;
}

/**
 * Sign-up and reset requests are limited like failed sign-ins (app.console_attempts_left, per
 * address and per client) and every one counts, so the forms cannot flood an inbox or fill the
 * accounts table. False when over the limit (Retry-After set; the caller writes its 429 page).
 */
async function requestCounted(kit: Kit, ctx: Context, email: string) {
  if (!(await attemptsLeft(kit, ctx, email))) return false;
  await kit.sql`select app.console_count_attempt(${email}, ${ctx.ip || 'unknown'})`;
  return true;
}

/**
 * Whether a link e-mail may be sent to `email` now: not over the request limit (429; the request is
 * counted otherwise), nor while the mail server is away (503: asked for any address, so that the
 * answer never tells which addresses have accounts). The refusal's message and status, or null.
 */
async function mailRefused({ kit, mail }: Auth, ctx: Context, email: string, what: string): Promise<{ message: Html; status: number } | null> {
  if (!(await requestCounted(kit, ctx, email))) return { message: tooMany, status: 429 };
  if (!(await mail.reachable())) return { message: notSent(what), status: 503 };
  return null;
}

/** The account of an address (any case), with the address as stored (the one mailed), or undefined. */
const accountOf = async (sql: Sql, email: string) =>
  (await sql<{ owner: string; email: string; disabled: boolean }[]>`select owner, email, disabled_at is not null as disabled from app.owners where lower(email) = lower(${email}) and role is not null`)[0];
const addressTaken = async (sql: Sql, email: string) => (await sql`select 1 from app.owners where lower(email) = lower(${email}) and role is not null`).length > 0;

// ---- sign-in and out
async function signIn({ kit, dummyHash }: Auth, ctx: Context, fields: Fields) {
  const parsed = signInForm.safeParse(fields);
  if (!parsed.success) return signInPage(kit, ctx, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const { email, password: given } = parsed.data;
  if (!(await attemptsLeft(kit, ctx, email))) return signInPage(kit, ctx, { values: fields, message: notice('Too many failed sign-ins; wait a minute and try again.', 'error') }, 429);
  const [candidate] = await kit.sql<{ owner: string; password_hash: string | null; email_verified_at: Date | null }[]>`select * from app.console_sign_in_candidate(${email})`;
  const matches = await verify(candidate?.password_hash ?? (await dummyHash), given);
  if (!candidate?.password_hash || !matches) {
    await kit.sql`select app.console_count_attempt(${email}, ${ctx.ip || 'unknown'})`;
    return signInPage(kit, ctx, { values: fields, errors: { password: 'The e-mail address or the password is wrong.' } }, 401);
  }
  if (!candidate.email_verified_at) {
    return signInPage(kit, ctx, { values: fields, errors: { email: 'Confirm this address first: open the link in the e-mail we sent.' } }, 403);
  }
  await kit.openSession(ctx, candidate.owner, fields.next ?? '');
}

async function signOut({ sql, account, endSession }: Kit, ctx: Context) {
  const who = await account(ctx);
  if (who) await sql`select app.console_revoke_sessions(${who.owner}, ${who.session_id})`;
  endSession(ctx);
  ctx.redirect('/console/sign-in');
}

// ---- sign-up and verification
async function signUp(auth: Auth, ctx: Context, fields: Fields) {
  const { kit, mail } = auth;
  if (kit.config.CONSOLE_SIGNUP !== 'open') return closedSignUp(kit, ctx);
  if (!emailConfigured(kit.config)) return signUpPage(kit, ctx, { values: fields }, 503);
  const parsed = signUpForm.safeParse(fields);
  if (!parsed.success) return signUpPage(kit, ctx, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const { email } = parsed.data;
  const refused = await mailRefused(auth, ctx, email, 'the link that confirms your address');
  if (refused) return signUpPage(kit, ctx, { values: fields, message: refused.message }, refused.status);
  afterAnswer(kit, ctx, 'sign-up', async () => {
    const known = await accountOf(kit.sql, email);
    // a disabled account is told nothing (its owner can do nothing with it)
    if (known) return known.disabled ? undefined : mail.mailAccountExists(known.owner, known.email);
    const passwordHash = await hash(parsed.data.password);
    await mail.mailLink('verify_email', email, async (tx) => {
      if (await addressTaken(tx, email)) return false;
      const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${email}, 'user', ${passwordHash}) as owner`;
      return row!.owner;
    }).catch((error) => {
      // the same address signing up twice at once: the second meets the unique index, and its link is never stored
      if (!accountTaken(error)) throw error;
    });
  });
  // the same answer whether or not the address has an account (which is told so by e-mail)
  kit.page(ctx, 'Check your e-mail', notice(html`An e-mail is on its way to <strong>${email}</strong>. Open its link to confirm the address, then sign in.`));
}

// ---- an invite (mdapi invite): the account of the invited address, verified, signed in at once
async function acceptInvite(kit: Kit, ctx: Context, fields: Fields) {
  if (kit.config.CONSOLE_SIGNUP === 'closed') return closedSignUp(kit, ctx);
  const token = String(fields.token ?? '').slice(0, 100);
  const parsed = signUpForm.safeParse(fields);
  if (!parsed.success) return invitePage(kit, ctx, token, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const outcome = await inviteAccount(kit.sql, token, parsed.data.email, await hash(parsed.data.password));
  if ('gone' in outcome) return kit.page(ctx, 'Link not valid', linkNotValid('invite'), 410);
  if ('errors' in outcome) return invitePage(kit, ctx, token, { values: fields, errors: outcome.errors }, 422);
  await kit.openSession(ctx, outcome.owner, '/console/keys');
}

/** The account of an invite's address, verified; a refusal (another address, one taken) leaves the invite usable. */
function inviteAccount(sql: Kit['sql'], token: string, email: string, passwordHash: string) {
  return sql.begin(async (tx) => {
    const [invite] = await tx<{ email: string }[]>`select * from app.console_use_token('invite', ${tokenHash(token)})`;
    if (!invite) return { gone: true } as const;
    // a refusal rolls back, so the invite stays usable
    if (invite.email.toLowerCase() !== email.toLowerCase()) throw new Refused({ email: 'This invite is for another address.' });
    if (await addressTaken(tx as unknown as Sql, email)) throw new Refused({ email: ACCOUNT_EXISTS });
    const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${invite.email}, 'user', ${passwordHash}) as owner`;
    await tx`update app.owners set email_verified_at = now() where owner = ${row!.owner}`;
    return { owner: row!.owner } as const;
  }).catch((error) => {
    if (error instanceof Refused) return { errors: error.errors } as const;
    if (accountTaken(error)) return { errors: { email: ACCOUNT_EXISTS } } as const;
    throw error;
  });
}

async function verifyEmail({ sql, page }: Kit, ctx: Context) {
  const token = String(ctx.query.token ?? '');
  const [row] = token ? await sql<{ owner: string | null }[]>`select app.console_verify_email(${tokenHash(token)}) as owner` : [];
  if (!row?.owner) return page(ctx, 'Link not valid', linkNotValid('link'), 410);
  page(ctx, 'Address confirmed', html`${notice('Your e-mail address is confirmed.')}<p><a href="/console/sign-in">Sign in</a></p>`);
}

// ---- password reset (also the set-password link of mdapi create-account)
async function requestReset(auth: Auth, ctx: Context, fields: Fields) {
  const { kit, mail } = auth;
  if (!emailConfigured(kit.config)) return resetRequestPage(kit, ctx, { values: fields, message: notice('This service cannot send e-mail: ask the operator for a sign-in link.', 'error') }, 503);
  const parsed = resetForm.safeParse(fields);
  if (!parsed.success) return resetRequestPage(kit, ctx, { values: fields, errors: fieldErrors(parsed.error) }, 422);
  const { email } = parsed.data;
  const refused = await mailRefused(auth, ctx, email, 'the link');
  if (refused) return resetRequestPage(kit, ctx, { values: fields, message: refused.message }, refused.status);
  afterAnswer(kit, ctx, 'password reset', async () => {
    const known = await accountOf(kit.sql, email);
    if (known && !known.disabled) await mail.mailLink('reset_password', known.email, async () => known.owner);
  });
  // the same answer, in the same time, whether or not the address has an account
  kit.page(ctx, 'Check your e-mail', notice('If this address has an account, a link to set a new password is on its way.'));
}

async function setPassword(kit: Kit, ctx: Context, fields: Fields) {
  const parsed = setPasswordForm.safeParse(fields);
  if (!parsed.success) return setPasswordPage(kit, ctx, fields.token ?? '', fieldErrors(parsed.error), 422);
  const passwordHash = await hash(parsed.data.password);
  const owner = await kit.sql.begin(async (tx) => {
    const [used] = await tx<{ owner: string; email: string }[]>`select * from app.console_use_token('reset_password', ${tokenHash(parsed.data.token)})`;
    if (!used) return null;
    await tx`select app.console_set_password(${used.owner}, ${passwordHash})`;
    // the link reached this address (or the operator handed it out): the address is verified
    await tx`update app.owners set email_verified_at = coalesce(email_verified_at, now()) where owner = ${used.owner} and email = ${used.email}`;
    return used.owner;
  });
  if (!owner) return kit.page(ctx, 'Link not valid', linkNotValid('link'), 410);
  await kit.openSession(ctx, owner, '/console/keys');
}
