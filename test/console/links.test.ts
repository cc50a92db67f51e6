// The console's e-mailed links, sent by the console itself to a loopback SMTP mailbox while the
// reader waits: sign-up and verification, password reset, each link single-use, no link kept in the
// outbox, SMTP down (nothing made), and the per-client sign-in limit.
import test from 'ava';
import { startMailbox } from '../../dev/mailbox.ts';
import { inviteAccount } from '../../src/console/accounts.ts';
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

test.serial('sign-up: errors beside the fields, a verification link queued, sign-in only once verified, the link used once', async (t) => {
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/sign-up');
  const short = await client.post('/console/sign-up', { email: 'new@example.com', password: 'short' });
  t.is(short.status, 422);
  t.regex(short.text, /id="f-password-error">Error: Use at least 12 characters/);
  t.is(await linkFor('new@example.com'), null, 'nothing made');

  const made = await client.post('/console/sign-up', { email: 'new@example.com', password: PASSWORD });
  t.is(made.status, 200);
  t.regex(made.text, /Check your e-mail/);
  const [owner] = await handles.db.sql`select owner, role, password_hash like '$argon2id$%' as argon2id, email_verified_at from app.owners where email = 'new@example.com'`;
  t.like({ ...owner }, { role: 'user', argon2id: true, email_verified_at: null });
  const path = (await linkFor('new@example.com'))!;
  t.regex(path, /^\/console\/verify\?token=[\w-]{43}$/);
  const [stored] = await handles.db.sql`select count(*)::int as n from app.console_tokens where purpose = 'verify_email' and owner = ${owner!.owner}`;
  t.is(stored!.n, 1);

  const again = await client.post('/console/sign-up', { email: 'NEW@example.com', password: PASSWORD });
  t.is(again.status, 409);
  t.regex(again.text, /An account with this address exists/);

  const early = await client.signIn('new@example.com', PASSWORD);
  t.is(early.status, 403);
  t.regex(early.text, /Confirm this address first/);

  t.is((await client.get(path)).status, 200);
  t.is((await client.get(path)).status, 410, 'a link works once');
  t.is((await client.get('/console/verify?token=made-up')).status, 410);
  t.is((await client.signIn('new@example.com', PASSWORD)).location, '/console/keys');
});

test.serial('password reset: the same answer for any address, a link that sets a new password once and ends the other sessions', async (t) => {
  const { client: old } = await signedInAccount(handles.db.sql, handles.api.base, 'reset@example.com');
  const client = new ConsoleClient(handles.api.base);
  await client.get('/console/reset');
  const unknown = await client.post('/console/reset', { email: 'nobody@example.com' });
  const known = await client.post('/console/reset', { email: 'reset@example.com' });
  t.is(unknown.status, 200);
  t.is(known.status, 200);
  const fixed = (text: string) => text.replace(/(name="csrf" value|nonce)="[^"]+"/g, '');
  t.is(fixed(unknown.text), fixed(known.text));
  t.is(await linkFor('nobody@example.com'), null);
  const path = (await linkFor('reset@example.com'))!;
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
    select data, status, attempts from app.email_messages where kind = 'console.link' and recipient = 'new@example.com'`;
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
  const { client } = await signedInAccount(handles.db.sql, handles.api.base, 'quiet@example.com');
  await client.get('/console/keys');
  const key = /id="new-key-value">(mdk_[\w-]+)</.exec((await client.post('/console/keys', { name: 'quiet', plan: 'free' })).text)![1]!;
  await client.post('/console/reset', { email: 'quiet@example.com' });
  const link = new URL((await linkFor('quiet@example.com'))!, handles.api.base).searchParams.get('token')!;
  const written = log.text();
  t.true(written.includes('"route":"/console/keys"'), `the requests were logged: ${written.slice(0, 300)}`);
  for (const secret of [PASSWORD, link, key, ...client.jar.values()]) t.false(written.includes(secret), 'a secret in the log');
});
