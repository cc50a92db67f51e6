// Accounts made by the operator (mdapi create-account): the account, verified (the operator vouches
// for the address), and a one-time link to set its password, printed rather than e-mailed; and
// invites (mdapi invite), a printed link that makes the account of one address.
import type { Sql } from '../db/client.ts';
import { newToken, tokenHash } from './session.ts';

/** How long the printed set-password link works. */
export const SET_PASSWORD_HOURS = 24;
/** How long an invite works. */
export const INVITE_DAYS = 7;

/** An account with this address exists already. */
export class AccountExistsError extends Error {}

/** app.console_create_account's P0C01, or the unique index met by two accounts of one address made at once */
export const accountTaken = (error: unknown) => ['P0C01', '23505'].includes((error as { code?: string }).code ?? '');

/**
 * The account (an existing owner keeps its keys), and the path of its set-password link. Run it in
 * a transaction: a refused address leaves nothing behind.
 */
export async function createAccount(tx: Sql, { email, admin = false, owner }: { email: string; admin?: boolean; owner?: string }): Promise<{ owner: string; path: string }> {
  const token = newToken();
  const [row] = await tx<{ owner: string }[]>`select app.console_create_account(${email}, ${admin ? 'admin' : 'user'}, null, ${owner ?? null}) as owner`
    .catch((error) => {
      if ((error as { code?: string }).code === 'P0C02') throw new AccountExistsError(`the owner ${owner} is a console account already`);
      throw accountTaken(error) ? new AccountExistsError(`an account with the address ${email} exists`) : error;
    });
  await tx`update app.owners set email_verified_at = coalesce(email_verified_at, now()) where owner = ${row!.owner}`;
  await tx`select app.console_issue_token('reset_password', ${tokenHash(token)}, ${row!.owner}, ${email}, ${`${SET_PASSWORD_HOURS} hours`}::interval)`;
  return { owner: row!.owner, path: `/console/reset/set?token=${token}` };
}

/** An invite for an address (CONSOLE_SIGNUP=invite or open): the path of its link, which makes the account once. */
export async function inviteAccount(sql: Sql, email: string): Promise<string> {
  const token = newToken();
  await sql`select app.console_issue_token('invite', ${tokenHash(token)}, null, ${email}, ${`${INVITE_DAYS} days`}::interval)`;
  return `/console/invite?token=${token}`;
}
