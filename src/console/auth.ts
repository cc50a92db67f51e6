// Console sign-in and out, sign-up (CONSOLE_SIGNUP), invites, e-mail verification and password
// reset (also the set-password link of mdapi create-account). Passwords are argon2id hashes.
// Sign-up and reset answer the same, in the same time, whether or not the address has an account:
// what differs (the e-mail, the account made) is done after the answer.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { emailConfigured } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { composeEmail, createMailer } from '../mail/smtp.ts';
import type { ConsoleLinkData } from '../mail/templates.ts';
import { email as emailFormat } from '../validators.ts';
import { accountTaken } from './accounts.ts';
import { field, form, html, notice, type Html } from './html.ts';
import { fieldErrors, Refused, type Errors, type PageGroup } from './kit.ts';
import { newToken, safeNext, tokenHash } from './session.ts';

const LINK_HOURS = { verify_email: 48, reset_password: 2, invite: 7 * 24 } as const;
const ACCOUNT_EXISTS = 'An account with this address exists: sign in, or reset its password.';
export const password = z.string().min(12, 'Use at least 12 characters.').max(200, 'Use at most 200 characters.');

export const authPages: PageGroup = (router, { sql, config, deps, csrf, page, posted, account, openSession, endSession }) => {
  // checked against when the address is unknown, so that a wrong address costs as long as a wrong password
  const dummyHash = hash(newToken());
  const signUpForm = z.object({ email: emailFormat, password });
  const signInForm = z.object({ email: emailFormat, password: z.string().min(1, 'Enter your password.').max(200) });

  const mailer = createMailer(config);
  const notSent = (what: string) => notice(`The e-mail with ${what} could not be sent (the mail server did not accept it), so nothing was changed. Try again in a few minutes.`, 'error');

  /**
   * Work done once the answer is written, so that the answer's time tells nothing of it (such as
   * whether an address has an account); a failure is logged, never shown.
   */
  function afterAnswer(ctx: Context, what: string, work: () => Promise<unknown>) {
    ctx.res.once('close', () => {
      work().catch((error: unknown) => deps.logger?.error({ err: error }, `console ${what}: the work after the answer failed`));
    });
  }

  /**
   * Sign-up and reset requests are limited like failed sign-ins (app.console_attempts_left, per
   * address and per client) and every one counts, so the forms cannot flood an inbox or fill the
   * accounts table. False when over the limit (Retry-After set; the caller writes its 429 page).
   */
  async function requestCounted(ctx: Context, email: string) {
    const client = ctx.ip || 'unknown';
    const [left] = await sql<{ ok: boolean }[]>`select app.console_attempts_left(${email}, ${client}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT}, ${config.CONSOLE_SIGN_IN_FAILURES_PER_CLIENT}) as ok`;
    if (!left!.ok) {
      ctx.set('Retry-After', '60');
      return false;
    }
    await sql`select app.console_count_attempt(${email}, ${client})`;
    return true;
  }
  const tooMany = notice('Too many requests; wait a minute and try again.', 'error');

  /** The account of an address (any case), with the address as stored (the one mailed), or undefined. */
  const accountOf = async (email: string) =>
    (await sql<{ owner: string; email: string; disabled: boolean }[]>`select owner, email, disabled_at is not null as disabled from app.owners where lower(email) = lower(${email}) and role is not null`)[0];

  /**
   * E-mails a link (after the answer), before its token is stored: `store` (given a transaction)
   * runs only once the mail server accepted it, and the outbox records it without the link. Returns
   * whether it was delivered; when not, nothing was stored.
   */
  async function mailLink(purpose: 'verify_email' | 'reset_password', email: string, store: (tx: Sql) => Promise<string | false>) {
    const token = newToken();
    const data: ConsoleLinkData = { purpose, path: `/console/${purpose === 'verify_email' ? 'verify' : 'reset/set'}?token=${token}`, hours: LINK_HOURS[purpose] };
    const { id, sent } = await mail(email, data);
    if (sent.outcome !== 'delivered') return { delivered: false, stored: false } as const;
    const stored = await sql.begin(async (tx) => {
      const owner = await store(tx as unknown as Sql);
      if (owner === false) return false;
      await tx`select app.console_issue_token(${purpose}, ${tokenHash(token)}, ${owner}, ${email}, ${`${LINK_HOURS[purpose]} hours`}::interval)`;
      await tx`select app.console_record_link_email(${id}, ${owner}, ${email}, ${tx.json({ ...data })}, ${sent.smtpCode}, ${sent.response}, ${sent.durationMs})`;
      return true;
    });
    return { delivered: true, stored } as const;
  }

  async function mail(email: string, data: ConsoleLinkData) {
    const id = randomUUID();
    const sent = await mailer.send(composeEmail({ id, recipient: email, kind: 'console.link', data, created_at: new Date() }, config));
    if (sent.outcome !== 'delivered') deps.logger?.warn({ purpose: data.purpose, outcome: sent.outcome, smtpCode: sent.smtpCode }, 'console: a link e-mail was not accepted by the mail server');
    return { id, sent };
  }

  /** A sign-up with the address of an account: that account is told (no link, nothing made). */
  async function mailAccountExists(owner: string, email: string) {
    const data: ConsoleLinkData = { purpose: 'account_exists', path: '/console/reset', hours: 0 };
    const { id, sent } = await mail(email, data);
    if (sent.outcome === 'delivered') await sql`select app.console_record_link_email(${id}, ${owner}, ${email}, ${sql.json({ ...data })}, ${sent.smtpCode}, ${sent.response}, ${sent.durationMs})`;
  }

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
    endSession(ctx);
    ctx.redirect('/console/sign-in');
  });

  // ---- sign-up and verification
  const signUpAllowed = () => config.CONSOLE_SIGNUP === 'open';
  const invitesAllowed = () => config.CONSOLE_SIGNUP !== 'closed';
  const signUpPage = (ctx: Context, values: Record<string, string> = {}, errors: Errors = {}, status = 200, message?: Html) =>
    page(ctx, 'Make an account', emailConfigured(config)
      ? html`${message ?? ''}${form('/console/sign-up', csrf(ctx), [
        field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'email' }),
        field({ name: 'password', label: 'Password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
      ], 'Make account')}`
      : notice('This service cannot send e-mail (SMTP is not configured), so no account can be made here: ask the operator.', 'error'), status);

  router.get('/sign-up', (ctx) => (signUpAllowed() ? signUpPage(ctx) : closedSignUp(ctx)));
  router.post('/sign-up', async (ctx) => {
    const fields = await posted(ctx);
    if (!fields) return;
    if (!signUpAllowed()) return closedSignUp(ctx);
    if (!emailConfigured(config)) return signUpPage(ctx, fields, {}, 503);
    const parsed = signUpForm.safeParse(fields);
    if (!parsed.success) return signUpPage(ctx, fields, fieldErrors(parsed.error), 422);
    const { email } = parsed.data;
    if (!(await requestCounted(ctx, email))) return signUpPage(ctx, fields, {}, 429, tooMany);
    // the same for any address: nothing can be promised while the mail server is away
    if (!(await mailer.reachable())) return signUpPage(ctx, fields, {}, 503, notSent('the link that confirms your address'));
    afterAnswer(ctx, 'sign-up', async () => {
      const known = await accountOf(email);
      // a disabled account is told nothing (its owner can do nothing with it)
      if (known) return known.disabled ? undefined : mailAccountExists(known.owner, known.email);
      const passwordHash = await hash(parsed.data.password);
      const taken = (tx: Sql) => tx`select 1 from app.owners where lower(email) = lower(${email}) and role is not null`.then((rows) => rows.length > 0);
      await mailLink('verify_email', email, async (tx) => {
        if (await taken(tx)) return false;
        const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${email}, 'user', ${passwordHash}) as owner`;
        return row!.owner;
      }).catch((error) => {
        // the same address signing up twice at once: the second meets the unique index, and its link is never stored
        if (!accountTaken(error)) throw error;
      });
    });
    // the same answer whether or not the address has an account (which is told so by e-mail)
    page(ctx, 'Check your e-mail', notice(html`An e-mail is on its way to <strong>${email}</strong>. Open its link to confirm the address, then sign in.`));
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
    const { email } = parsed.data;
    if (!(await requestCounted(ctx, email))) return resetRequestPage(ctx, fields, {}, 429, tooMany);
    // asked for any address, so that the answer never tells which addresses have accounts
    if (!(await mailer.reachable())) return resetRequestPage(ctx, fields, {}, 503, notSent('the link'));
    afterAnswer(ctx, 'password reset', async () => {
      const known = await accountOf(email);
      if (known && !known.disabled) await mailLink('reset_password', known.email, async () => known.owner);
    });
    // the same answer, in the same time, whether or not the address has an account
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

};
