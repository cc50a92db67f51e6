// The console's e-mailed links, sent by the console itself to a loopback SMTP mailbox after its
// answer: sign-up and verification, password reset, each link single-use and ended by a newer one
// or a new password, no link kept in the outbox, SMTP down (nothing made), the same answer for an
// address with or without an account, the sign-in and sign-up limits, the expiry of unconfirmed
// accounts, and the one e-mail rule (an address stored canonical and mailed as stored).
import test from 'ava';
import { startMailbox } from '../../dev/mailbox.ts';
import { poll, sleep } from '../../dev/wait.ts';
import { expireConsoleAccounts } from '../../jobs/expire_console_accounts.ts';
import { crontab } from '../../jobs/index.ts';
import { inviteAccount } from '../../src/console/accounts.ts';
import { tokenHash } from '../../src/console/session.ts';
import { InvalidEmailError, setOwnerEmail } from '../../src/keys.ts';
import { ConsoleClient, PASSWORD, signedInAccount } from '../helpers/console.ts';
import { awayFromMinuteBoundary, useApi } from '../helpers/http.ts';
import { captureLog } from '../helpers/log.ts';

const log = captureLog('debug');
const mailbox = await startMailbox();
test.after.always(() => mailbox.stop());
const handles = useApi(test, { logger: log.logger, env: { LOG_REQUESTS: 'true', SMTP_URL: mailbox.url, SMTP_TIMEOUT_MS: '2000', MAIL_FROM: 'Console <console@example.com>', CONSOLE_SIGNUP: 'open', CONSOLE_SIGN_IN_FAILURES_PER_CLIENT: '4' } });

/** The path of the newest console link e-mailed to an address. */
async function linkFor(email: string): Promise<string | null> {
  const mail = mailbox.accepted.findLast((m) => m.envelope.to.includes(email));
  return mail ? /(\/console\/[\w/]+\?token=[\w-]+)/.exec(mail.text)?.[1] ?? null : null;
}

/** The mails accepted for an address, once there are `count` (they are sent after the answer). */
async function mailsTo(email: string, count = 1) {
  const to = () => mailbox.accepted.filter((m) => m.envelope.to.includes(email));
  return poll(to, (mails) => mails.length >= count, { timeoutMs: 10_000 });
}

/** The path of the link of the `nth` mail to an address (1: the first), once it arrived and its token is stored (just after). */
async function nthLink(email: string, nth: number) {
  const mail = (await mailsTo(email, nth))[nth - 1]!;
  const path = /(\/console\/[\w/]+\?token=[\w-]+)/.exec(mail.text)![1]!;
  const hash = tokenHash(new URL(path, handles.api.base).searchParams.get('token')!);
  await poll(() => handles.db.sql`select from app.console_tokens where token_hash = ${hash}`, (rows) => rows.length > 0, { timeoutMs: 10_000 });
  return path;
}

/** Sign-up and reset requests count against this file's per-client limit (4 a minute): a clean slate. */
const forgetAttempts = () => handles.db.sql`delete from app.auth_failures`;
/** A page without what differs on every answer (its CSRF token, its nonce) */
const fixed = (text: string) => text.replace(/(name="csrf" value|nonce)="[^"]+"/g, '');

test.serial('sign-up: errors beside the fields, a verification link queued, sign-in only once verified, the link used once', async (t) => {
  await forgetAttempts();
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/sign-up');
  const short = await client.post('/console/sign-up', { email: 'new@example.com', password: 'short' });
  t.is(short.status, 422);
  t.regex(short.text, /id="f-password-error">Error: Use at least 12 characters/);
  t.is(await linkFor('new@example.com'), null, 'nothing made');

  const made = await client.post('/console/sign-up', { email: 'new@example.com', password: PASSWORD });
  t.is(made.status, 200);
  t.regex(made.text, /Check your e-mail/);
  const path = await nthLink('new@example.com', 1);
  const [owner] = await handles.db.sql`select owner, role, password_hash like '$argon2id$%' as argon2id, email_verified_at from app.owners where email = 'new@example.com'`;
  t.like({ ...owner }, { role: 'user', argon2id: true, email_verified_at: null });
  t.regex(path, /^\/console\/verify\?token=[\w-]{43}$/);
  const [stored] = await handles.db.sql`select count(*)::int as n from app.console_tokens where purpose = 'verify_email' and owner = ${owner!.owner}`;
  t.is(stored!.n, 1);

  // the account's address is told by e-mail, not on the page
  const again = await client.post('/console/sign-up', { email: 'NEW@example.com', password: PASSWORD });
  t.is(again.status, 200);
  t.is((await mailsTo('new@example.com', 2))[1]!.headers.subject, 'You already have a console account');

  const early = await client.signIn('new@example.com', PASSWORD);
  t.is(early.status, 403);
  t.regex(early.text, /Confirm this address first/);

  t.is((await client.get(path)).status, 200);
  t.is((await client.get(path)).status, 410, 'a link works once');
  t.is((await client.get('/console/verify?token=made-up')).status, 410);
  t.is((await client.signIn('new@example.com', PASSWORD)).location, '/console/keys');
});

test.serial('password reset: the same answer for any address, a link that sets a new password once and ends the other sessions', async (t) => {
  await forgetAttempts();
  const { client: old } = await signedInAccount(handles.db.sql, handles.api.base, 'reset@example.com');
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/reset');
  const unknown = await client.post('/console/reset', { email: 'nobody@example.com' });
  const known = await client.post('/console/reset', { email: 'reset@example.com' });
  t.is(unknown.status, 200);
  t.is(known.status, 200);
  t.is(fixed(unknown.text), fixed(known.text));
  const path = await nthLink('reset@example.com', 1);
  t.is(await linkFor('nobody@example.com'), null);
  t.regex(path, /^\/console\/reset\/set\?token=/);

  const weak = await client.setPassword(path, 'short');
  t.is(weak.status, 422, 'a refused password leaves the link usable');
  const set = await client.setPassword(path, 'a brand new passphrase');
  t.is(set.location, '/console/keys');
  t.is((await client.get('/console/keys')).status, 200);
  t.is((await old.get('/console/keys')).status, 302, 'the other session ended');
  t.is((await client.setPassword(path, 'yet another passphrase')).status, 410);
  t.is((await new ConsoleClient(handles.api.base).signIn('reset@example.com', PASSWORD)).status, 401);
  t.is((await new ConsoleClient(handles.api.base).signIn('reset@example.com', 'a brand new passphrase')).status, 302);
});

test.serial('the outbox records a link e-mail as delivered, without the link', async (t) => {
  const rows = await handles.db.sql<{ data: Record<string, unknown>; status: string; attempts: number }[]>`
    select data, status, attempts from app.email_messages where kind = 'console.link' and recipient = 'new@example.com' and data->>'purpose' = 'verify_email'`;
  t.is(rows.length, 1);
  t.like(rows[0], { data: { purpose: 'verify_email', hours: 48 }, status: 'delivered', attempts: 1 });
  t.false('path' in rows[0]!.data);
  const [stored] = await handles.db.sql`select count(*)::int as n from app.email_messages m where m::text like '%token=%'`;
  t.is(stored!.n, 0, 'no link at rest');
});

test.serial('SMTP down: sign-up and reset say the e-mail could not be sent, and nothing is made', async (t) => {
  // this file's other tests count reset requests against the client's per-minute limit
  await handles.db.sql`delete from app.auth_failures`;
  const { owner } = await signedInAccount(handles.db.sql, handles.api.base, 'down-reset@example.com');
  const tokens = async () => (await handles.db.sql`select count(*)::int as n from app.console_tokens where purpose <> 'invite'`)[0]!.n as number;
  const before = await tokens();
  await mailbox.stop();
  try {
    const client = new ConsoleClient(handles.api.base);
    await client.get('/console/sign-up');
    const signUp = await client.post('/console/sign-up', { email: 'down@example.com', password: PASSWORD });
    t.is(signUp.status, 503);
    t.regex(signUp.text, /could not be sent[^<]*nothing was changed/);
    t.is((await handles.db.sql`select count(*)::int as n from app.owners where email = 'down@example.com'`)[0]!.n, 0);
    const known = await client.post('/console/reset', { email: 'down-reset@example.com' });
    const unknown = await client.post('/console/reset', { email: 'nobody-down@example.com' });
    t.is(known.status, 503);
    t.is(unknown.status, 503, 'the same answer for an address without an account');
    t.regex(known.text, /could not be sent/);
    t.is(await tokens(), before, 'no link stored');
    t.is((await handles.db.sql`select count(*)::int as n from app.email_messages where owner = ${owner} and kind = 'console.link'`)[0]!.n, 0);
  } finally {
    await mailbox.start();
    await handles.db.sql`delete from app.auth_failures`;
  }
});

test.serial('an invite makes the account of the invited address once, verified and signed in; another address is refused', async (t) => {
  const path = await inviteAccount(handles.db.sql, 'Invited@example.com');
  const token = new URL(path, handles.api.base).searchParams.get('token')!;
  const client = new ConsoleClient(handles.api.base);
  await client.get(path);
  const other = await client.post('/console/invite', { token, email: 'someone@example.com', password: PASSWORD });
  t.is(other.status, 422);
  t.regex(other.text, /id="f-email-error">Error: This invite is for another address/);
  t.is((await handles.db.sql`select count(*)::int as n from app.owners where lower(email) = 'someone@example.com'`)[0]!.n, 0);
  const made = await client.post('/console/invite', { token, email: 'invited@example.com', password: PASSWORD });
  t.is(made.location, '/console/keys');
  t.is((await client.get('/console/keys')).status, 200);
  const [row] = await handles.db.sql`select email, role, email_verified_at is not null as verified from app.owners where lower(email) = 'invited@example.com'`;
  t.deepEqual({ ...row }, { email: 'Invited@example.com', role: 'user', verified: true });
  t.is((await new ConsoleClient(handles.api.base).request('GET', path)).status, 200, 'the form shows; using it again does not work');
  const again = new ConsoleClient(handles.api.base);
  await again.get(path);
  t.is((await again.post('/console/invite', { token, email: 'invited@example.com', password: PASSWORD })).status, 410);
});

test.serial('sign-in is limited per client address too, across addresses', async (t) => {
  await awayFromMinuteBoundary(15);
  const client = new ConsoleClient(handles.api.base);
  let last = 0;
  for (let i = 0; i < 5 && last !== 429; i++) last = (await client.signIn(`guess${i}@example.com`, 'wrong password!')).status;
  t.is(last, 429);
  t.is((await client.signIn('other@example.com', 'x')).status, 429);
});

test.serial('no log line carries a password, a link token, a session token or a key', async (t) => {
  await forgetAttempts();
  const { client } = await signedInAccount(handles.db.sql, handles.api.base, 'quiet@example.com');
  await client.get('/console/keys');
  const key = /id="new-key-value">(mdk_[\w-]+)</.exec((await client.post('/console/keys', { name: 'quiet', plan: 'free' })).text)![1]!;
  await client.post('/console/reset', { email: 'quiet@example.com' });
  const link = new URL(await nthLink('quiet@example.com', 1), handles.api.base).searchParams.get('token')!;
  const written = log.text();
  t.true(written.includes('"route":"/console/keys"'), `the requests were logged: ${written.slice(0, 300)}`);
  for (const secret of [PASSWORD, link, key, ...client.jar.values()]) t.false(written.includes(secret), 'a secret in the log');
});

test.serial('a newer reset link ends the older ones, and setting a password ends every other unused link', async (t) => {
  await forgetAttempts();
  await signedInAccount(handles.db.sql, handles.api.base, 'two-links@example.com');
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/reset');
  await client.post('/console/reset', { email: 'two-links@example.com' });
  const first = await nthLink('two-links@example.com', 1);
  await client.post('/console/reset', { email: 'two-links@example.com' });
  const second = await nthLink('two-links@example.com', 2);
  t.is((await client.setPassword(second, 'the newer link passphrase')).location, '/console/keys');
  t.is((await client.setPassword(second, 'the newer link passphrase')).status, 410);
  t.is((await new ConsoleClient(handles.api.base).setPassword(first, 'the older link passphrase')).status, 410, 'the older link ended');
  t.is((await new ConsoleClient(handles.api.base).signIn('two-links@example.com', 'the newer link passphrase')).status, 302);

  // a link of the account left live some other way (an older release kept them all): a new password ends it
  await client.post('/console/reset', { email: 'two-links@example.com' });
  const third = await nthLink('two-links@example.com', 3);
  const leftOver = 'left-over-link-token-000000000000000000000';
  const owner = (await handles.db.sql<{ owner: string }[]>`select owner from app.owners where email = 'two-links@example.com'`)[0]!.owner;
  await handles.db.sql`insert into app.console_tokens (token_hash, purpose, owner, email, expires_at)
    values (${tokenHash(leftOver)}, 'reset_password', ${owner}, 'two-links@example.com', now() + interval '1 hour')`;
  t.is((await client.setPassword(third, 'a third passphrase here')).location, '/console/keys');
  t.is((await new ConsoleClient(handles.api.base).setPassword(`/console/reset/set?token=${leftOver}`, 'the left-over passphrase')).status, 410, 'a new password ended it');
  const [live] = await handles.db.sql`select count(*)::int as n from app.console_tokens where owner = ${owner} and used_at is null`;
  t.is(live!.n, 0);
});

test.serial('sign-up is limited per client and per address like sign-in; an unconfirmed account expires and frees its address', async (t) => {
  await forgetAttempts();
  await awayFromMinuteBoundary(20);
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/sign-up');
  const statuses: number[] = [];
  for (let i = 1; i <= 6; i++) statuses.push((await client.post('/console/sign-up', { email: `flood${i}@example.com`, password: PASSWORD })).status);
  // CONSOLE_SIGN_IN_FAILURES_PER_CLIENT is 4 in this file
  t.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  for (let i = 1; i <= 4; i++) await nthLink(`flood${i}@example.com`, 1);
  t.is((await handles.db.sql`select count(*)::int as n from app.owners where email like 'flood%@example.com'`)[0]!.n, 4, 'nothing made past the limit');
  t.is(mailbox.accepted.filter((m) => /^flood[56]@/.test(m.envelope.to[0] ?? '')).length, 0, 'nothing mailed past the limit');

  // per address: five this minute (CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT) and that address is refused, another is not
  await forgetAttempts();
  await handles.db.sql`insert into app.auth_failures (subject, window_start, failures) values ('console:target@example.com', date_trunc('minute', now()), 5)`;
  t.is((await client.post('/console/sign-up', { email: 'Target@example.com', password: PASSWORD })).status, 429);
  t.is((await client.post('/console/sign-up', { email: 'other-target@example.com', password: PASSWORD })).status, 200);

  // expiry: an account unconfirmed for longer than CONSOLE_UNVERIFIED_DAYS (7 by default) is deleted by the hourly job
  const verify = await nthLink('flood1@example.com', 1);
  await handles.db.sql`update app.owners set created_at = now() - interval '8 days' where email in ('flood1@example.com', 'new@example.com')`;
  await handles.db.sql`update app.owners set created_at = now() - interval '6 days' where email = 'flood2@example.com'`;
  t.regex(crontab, /^37 \* \* \* \* expire_console_accounts \?max=1$/m);
  await expireConsoleAccounts({ CONSOLE_UNVERIFIED_DAYS: 7 })({}, { query: (text: string, values: unknown[]) => handles.db.sql.unsafe(text, values as never[]) } as never);
  const left = await handles.db.sql<{ email: string }[]>`select email from app.owners where email in ('flood1@example.com', 'flood2@example.com', 'new@example.com') order by email`;
  t.deepEqual(left.map((row) => row.email), ['flood2@example.com', 'new@example.com'], 'only the old unconfirmed one ended (new@ is confirmed)');
  t.is((await client.get(verify)).status, 410, 'its link ended with it');
  await forgetAttempts();
  t.is((await client.post('/console/sign-up', { email: 'flood1@example.com', password: PASSWORD })).status, 200);
  t.regex((await nthLink('flood1@example.com', 2)), /^\/console\/verify\?token=/, 'the address is free: a new account, a new link');
});

test.serial('sign-up and reset answer alike for an address with and without an account, and mail after the answer', async (t) => {
  await forgetAttempts();
  const { owner } = await signedInAccount(handles.db.sql, handles.api.base, 'known@example.com');
  const [before] = await handles.db.sql`select password_hash from app.owners where owner = ${owner}`;
  const tokens = async () => (await handles.db.sql`select count(*)::int as n from app.console_tokens where owner = ${owner}`)[0]!.n as number;
  const tokensBefore = await tokens();
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/sign-up');
  const known = await client.post('/console/sign-up', { email: 'known@example.com', password: 'another passphrase!' });
  const unknown = await client.post('/console/sign-up', { email: 'unknown@example.com', password: 'another passphrase!' });
  t.is(known.status, 200);
  t.is(unknown.status, 200);
  t.is(fixed(known.text).replaceAll('known@example.com', 'X'), fixed(unknown.text).replaceAll('unknown@example.com', 'X'));
  // the work done after: the account's address is told; the new one gets its link and account
  const [exists] = await mailsTo('known@example.com');
  t.is(exists!.headers.subject, 'You already have a console account');
  t.regex(exists!.text, /\/console\/reset\r?\n/);
  t.regex(await nthLink('unknown@example.com', 1), /^\/console\/verify\?token=/);
  t.deepEqual({ ...(await handles.db.sql`select password_hash from app.owners where owner = ${owner}`)[0] }, { ...before }, 'the account is untouched');
  t.is(await tokens(), tokensBefore, 'no link for the account');
  t.is((await handles.db.sql`select count(*)::int as n from app.owners where lower(email) = 'known@example.com'`)[0]!.n, 1);
  // recorded in the outbox just after its delivery
  const recorded = await poll(() => handles.db.sql`select data from app.email_messages where owner = ${owner} and kind = 'console.link'`, (rows) => rows.length > 0);
  t.deepEqual(recorded.map((row) => row.data.purpose), ['account_exists']);

  // reset: the answer does not wait for the mail server, which here never answers the known address's mail
  await forgetAttempts();
  await client.get('/console/reset');
  const seen = mailbox.seen.length;
  mailbox.hold();
  const knownReset = await client.post('/console/reset', { email: 'known@example.com' });
  t.is(knownReset.status, 200, 'answered before the mail was sent');
  const unknownReset = await client.post('/console/reset', { email: 'nobody-at-all@example.com' });
  t.is(fixed(knownReset.text), fixed(unknownReset.text));
  await mailbox.waitFor(seen + 1);
  t.deepEqual(mailbox.seen.slice(seen).map((m) => m.envelope.to), [['known@example.com']], 'one mail, to the account, sent after the answer');
  // the held mail times out (SMTP_TIMEOUT_MS): no link is stored for it
  await sleep(2500);
  t.is(await tokens(), tokensBefore);
  t.is(mailbox.seen.slice(seen).length, 1, 'nothing for the address without an account');
});

test.serial('one e-mail rule: a quoted or odd address is refused, an address is stored canonical and mailed exactly as stored', async (t) => {
  await forgetAttempts();
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/sign-up');
  for (const refused of ['"<svg/onload=alert(2)>"@example.test', 'a(b)c@example.test', 'a@b@example.test', 'who@-example.test', 'who@exa mple.test']) {
    const page = await client.post('/console/sign-up', { email: refused, password: PASSWORD });
    t.is(page.status, 422, refused);
    t.regex(page.text, /id="f-email-error">Error: Must be an e-mail address/);
  }
  t.is((await handles.db.sql`select count(*)::int as n from app.owners where email like '%example.test'`)[0]!.n, 0, 'nothing stored');
  t.is(mailbox.seen.filter((m) => m.envelope.to.some((to) => to.endsWith('example.test'))).length, 0, 'nothing mailed');

  const typed = "  O'Brien+tag{1}/x=y@Mail.Example.TEST ";
  const canonical = "O'Brien+tag{1}/x=y@mail.example.test";
  t.is((await client.post('/console/sign-up', { email: typed, password: PASSWORD })).status, 200);
  const verify = await nthLink(canonical, 1);
  const [mail] = await mailsTo(canonical);
  const [row] = await handles.db.sql`select email from app.owners where lower(email) = lower(${canonical})`;
  t.is(row!.email, canonical, 'stored canonical');
  t.deepEqual(mail!.envelope.to, [canonical], 'mailed exactly as stored');
  t.is(mail!.headers.to, canonical);
  // the token of the link is for that address too: following it confirms the stored address
  t.is((await client.get(verify)).status, 200);
  t.is((await handles.db.sql`select email_verified_at is not null as verified from app.owners where email = ${canonical}`)[0]!.verified, true);

  // the operator's commands take addresses by the same rule (mdapi set-email, create-key --email)
  await t.throwsAsync(setOwnerEmail(handles.db.sql, 'cli-owner', '"<svg/onload=alert(2)>"@example.test'), { instanceOf: InvalidEmailError });
  await setOwnerEmail(handles.db.sql, 'cli-owner', ' Ops@Example.COM ');
  t.is((await handles.db.sql`select email from app.owners where owner = 'cli-owner'`)[0]!.email, 'Ops@example.com');
});
