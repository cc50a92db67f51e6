// The signed-out forms' markup (./auth.ts): sign in, make an account (sign-up, invite), reset and
// set a password, and the pages answering them.
import { field, form, html, notice, type Html } from './html.ts';
import type { Errors } from './kit.ts';
import { safeNext } from './session.ts';

/** What a form shows again: the values typed, the errors beside them, a message at its top. */
export interface Typed { values?: Record<string, string>; errors?: Errors; message?: Html }

export const signInView = (csrf: string, signUpOpen: boolean, { values = {}, errors = {}, message }: Typed) => html`${message ?? ''}${form('/console/sign-in', csrf, [
  field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'username' }),
  field({ name: 'password', label: 'Password', type: 'password', error: errors.password, autocomplete: 'current-password' }),
  html`<input type="hidden" name="next" value="${safeNext(values.next)}">`,
], 'Sign in')}
<p><a href="/console/reset">Forgot your password?</a>${signUpOpen ? html` · <a href="/console/sign-up">Make an account</a>` : ''}</p>`;

export const signUpView = (csrf: string, { values = {}, errors = {}, message }: Typed) => html`${message ?? ''}${form('/console/sign-up', csrf, [
  field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'email' }),
  field({ name: 'password', label: 'Password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
], 'Make account')}`;

export const noEmailView = () => notice('This service cannot send e-mail (SMTP is not configured), so no account can be made here: ask the operator.', 'error');

export const inviteView = (csrf: string, token: string, { values = {}, errors = {} }: Typed) => form('/console/invite', csrf, [
  html`<input type="hidden" name="token" value="${token}">`,
  field({ name: 'email', label: 'E-mail address (the invited one)', type: 'email', value: values.email, error: errors.email, autocomplete: 'email' }),
  field({ name: 'password', label: 'Password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
], 'Make account');

export const closedSignUpView = (invites: boolean) => notice(invites ? 'Accounts on this service are made by invitation: open the link of your invite.' : 'Accounts on this service are made by its operator.', 'error');

export const resetRequestView = (csrf: string, { values = {}, errors = {}, message }: Typed) => html`${message ?? ''}${form('/console/reset', csrf, [
  field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, error: errors.email, autocomplete: 'username' }),
], 'Send a reset link')}`;

export const setPasswordView = (csrf: string, token: string, errors: Errors) => form('/console/reset/set', csrf, [
  html`<input type="hidden" name="token" value="${token}">`,
  field({ name: 'password', label: 'New password (at least 12 characters)', type: 'password', error: errors.password, autocomplete: 'new-password' }),
], 'Set password');

/** A link (invite, set-password, verification) used already, expired or incomplete. */
export const linkNotValid = (what: 'invite' | 'link') => notice(`This ${what} is not valid: it was used already, has expired, or is incomplete.`, 'error');

export const tooMany = notice('Too many requests; wait a minute and try again.', 'error');
export const notSent = (what: string) => notice(`The e-mail with ${what} could not be sent (the mail server did not accept it), so nothing was changed. Try again in a few minutes.`, 'error');
