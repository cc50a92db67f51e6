// The e-mails of the signed-out forms (./auth.ts): a link (confirm an address, reset a password),
// sent before its token is stored, and the note to an address that has an account already.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/client.ts';
import { composeEmail, createMailer } from '../mail/smtp.ts';
import type { ConsoleLinkData } from '../mail/templates.ts';
import type { Kit } from './kit.ts';
import { newToken, tokenHash } from './session.ts';

export const LINK_HOURS = { verify_email: 48, reset_password: 2, invite: 7 * 24 } as const;

export type LinkMail = ReturnType<typeof linkMail>;

export function linkMail({ sql, config, deps }: Pick<Kit, 'sql' | 'config' | 'deps'>) {
  const mailer = createMailer(config);

  async function mail(email: string, data: ConsoleLinkData) {
    const id = randomUUID();
    const sent = await mailer.send(composeEmail({ id, recipient: email, kind: 'console.link', data, created_at: new Date() }, config));
    if (sent.outcome !== 'delivered') deps.logger?.warn({ purpose: data.purpose, outcome: sent.outcome, smtpCode: sent.smtpCode }, 'console: a link e-mail was not accepted by the mail server');
    return { id, sent };
  }

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

  /** A sign-up with the address of an account: that account is told (no link, nothing made). */
  async function mailAccountExists(owner: string, email: string) {
    const data: ConsoleLinkData = { purpose: 'account_exists', path: '/console/reset', hours: 0 };
    const { id, sent } = await mail(email, data);
    if (sent.outcome === 'delivered') await sql`select app.console_record_link_email(${id}, ${owner}, ${email}, ${sql.json({ ...data })}, ${sent.smtpCode}, ${sent.response}, ${sent.durationMs})`;
  }

  return { reachable: () => mailer.reachable(), mailLink, mailAccountExists };
}
