// E-mail delivery end to end: alarm e-mails queued by the price refresh, the send_email task of a
// real graphile-worker, and a real SMTP server on 127.0.0.1 (smtp-server; no network). Exactly one
// message per trigger with the right fields, retries while SMTP is down, a bounce recorded without
// a retry, redelivery with the same Message-ID after a worker is killed mid-send, and deprecation
// notices to each recent caller once.
import { spawn } from 'node:child_process';
import test from 'ava';
import { Logger, run, type Runner } from 'graphile-worker';
import { sendEmail } from '../../jobs/send_email.ts';
import { setOwnerEmail } from '../../src/keys.ts';
import { notifyDeprecations } from '../../src/mail/deprecation.ts';
import type { MailConfig } from '../../src/mail/smtp.ts';
import { defineRoute } from '../../src/http/routes.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { startMailbox, type Mailbox } from '../../dev/mailbox.ts';
import { until } from '../../dev/wait.ts';

// Retries wait 50, 250 and 1250 ms here (1, 5 and 25 minutes in production).
const RETRY_BASE_MS = 50;
const silent = new Logger(() => () => {});
let db: TestDatabase;
let runner: Runner;
let mailbox: Mailbox;

const mailConfig = (smtpUrl: string): MailConfig => ({
  SMTP_URL: smtpUrl, MAIL_FROM: 'Alarms <alarms@example.com>', SMTP_TIMEOUT_MS: 2_000, EMAIL_RETRY_BASE_MS: RETRY_BASE_MS,
  PUBLIC_URL: 'https://api.example.com', HOST: '127.0.0.1', PORT: 3000,
});
const startRunner = (smtpUrl: string) =>
  run({
    connectionString: db.url, noPreparedStatements: true, concurrency: 2, pollInterval: 50, logger: silent,
    minResetLockedInterval: 50, maxResetLockedInterval: 100,
    taskList: { send_email: sendEmail(mailConfig(smtpUrl)) },
  });

test.before(async () => {
  db = await testDatabase();
  mailbox = await startMailbox();
  runner = await startRunner(mailbox.url);
  await db.sql`insert into market.data_sources (name, kind, description) values ('mail-test', 'import', 'E-mail test fixture')`;
  await db.sql`
    insert into market.coins (id, slug, symbol, name, type, circulating_supply, source)
    values (501, 'alpha', 'ALP', 'Alpha <&> Coin', 'coin', 1000, 'mail-test')`;
  await db.sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (501, 100, 5000, 100000)`;
});
test.after.always(async () => {
  await runner?.stop();
  await mailbox?.stop();
  await db?.close();
});


/** An e-mail alarm of `owner` (address `email`) on alpha, above `target`; returns its id. */
async function emailAlarm(owner: string, email: string, target: string, name = 'Alpha up') {
  await setOwnerEmail(db.sql, owner, email);
  const [row] = await db.sql<{ id: string }[]>`
    select (app.create_alarm(${owner}, ${name}, 'alpha', 'rate', 'above', ${target}, 'email', array['webhook', 'email']) -> 'alarm' ->> 'id') as id`;
  return Number(row!.id);
}
/** Moves alpha's price and evaluates alarms, as a price refresh does, in one transaction. */
const trigger = (price: string) =>
  db.sql.begin(async (tx) => {
    await tx`update market.coin_state set price = ${price}::numeric where coin_id = 501`;
    return (await tx<{ emails: number }[]>`select * from app.evaluate_alarms()`)[0]!.emails;
  });
const messagesOf = (owner: string) =>
  db.sql<{ id: string; status: string; attempts: number; smtp_code: number | null; error: string | null; recipient: string | null }[]>`
    select id, status, attempts, smtp_code, error, recipient from app.email_messages where owner = ${owner} order by created_at`;
const attemptsOf = (owner: string) =>
  db.sql<{ outcome: string | null; smtp_code: number | null; response: string | null }[]>`
    select a.outcome, a.smtp_code, a.response from app.email_attempts a
    join app.email_messages m on m.id = a.message_id where m.owner = ${owner} order by a.id`;
const settled = (owner: string, count = 1) =>
  until(`${count} settled e-mails of ${owner}`, async () => (await messagesOf(owner)).filter((m) => m.status !== 'pending').length >= count);
const sendJobs = async () =>
  (await db.sql<{ n: number }[]>`
    select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks k on k.id = j.task_id
    where k.identifier = 'send_email'`)[0]!.n;
const sentTo = (address: string) => mailbox.accepted.filter((mail) => mail.envelope.to.includes(address));

test.serial('an alarm that triggers sends exactly one e-mail, with the coin, metric, direction, target, value and a link', async (t) => {
  const alarmId = await emailAlarm('ann', 'ann@example.com', '150.10', 'Ann <b>"moon"</b>');
  t.is(await trigger('100'), 0, 'not crossed: nothing queued');
  t.is(await trigger('150.5000'), 1);
  t.is(await trigger('151'), 0, 'a triggered alarm does not trigger again');
  await settled('ann');
  const [message] = await messagesOf('ann');
  t.like(message, { status: 'delivered', attempts: 1, smtp_code: 250, error: null, recipient: 'ann@example.com' });
  t.deepEqual((await attemptsOf('ann')).map((a) => [a.outcome, a.smtp_code]), [['delivered', 250]]);

  const mails = sentTo('ann@example.com');
  t.is(mails.length, 1);
  const mail = mails[0]!;
  t.deepEqual(mail.envelope, { from: 'alarms@example.com', to: ['ann@example.com'] });
  t.is(mail.headers['message-id'], `<${message!.id}@api.example.com>`, 'the event id, on the host of PUBLIC_URL');
  t.is(mail.headers.from, 'Alarms <alarms@example.com>');
  t.is(mail.headers.to, 'ann@example.com');
  t.is(mail.headers['auto-submitted'], 'auto-generated');
  t.is(mail.headers['x-service-event'], 'alarm.triggered');
  t.is(mail.headers.subject, 'Alarm triggered: Alpha <&> Coin (ALP) price (USD) at or above 150.10');
  t.regex(mail.headers['content-type']!, /^multipart\/alternative/);
  for (const line of ['Coin:', 'Alpha <&> Coin (ALP)', 'Metric:', 'price (USD)', 'Direction:', 'above', 'Target:', '150.10', 'Value:', '150.5000',
    'https://api.example.com/api/v1/alarms', `PATCH /api/v1/alarms/${alarmId}`, 'Ann <b>"moon"</b>']) {
    t.true(mail.text.includes(line), `text has ${line}`);
  }
  t.true(mail.html.includes('Alpha &lt;&amp;&gt; Coin (ALP)'), 'values are HTML-escaped');
  t.true(mail.html.includes('Ann &lt;b&gt;&quot;moon&quot;&lt;/b&gt;'));
  t.false(mail.html.includes('<b>"moon"</b>'));
  t.true(mail.html.includes('<td>150.5000</td>'), 'the value exactly as the database has it');
  t.true(mail.html.includes('href="https://api.example.com/api/v1/alarms"'));
  const [alarm] = await db.sql`select status, triggered_value::text as value from app.alarms where id = ${alarmId}`;
  t.deepEqual({ ...alarm }, { status: 'triggered', value: '150.5000' });
  await until('no send_email job left', async () => (await sendJobs()) === 0);
  t.is(sentTo('ann@example.com').length, 1, 'still exactly one');
});

test.serial('settled e-mails are kept for the outbox retention, then dropped when the owner\'s next e-mail settles', async (t) => {
  await emailAlarm('rita', 'rita@example.com', '700');
  const retention = (await db.sql<{ retention: string }[]>`select app.outbox_retention()::text as retention`)[0]!.retention;
  await db.sql`
    insert into app.email_messages (owner, kind, recipient, data, status, created_at, settled_at) values
      ('rita', 'alarm.triggered', 'rita@example.com', '{}', 'delivered', now() - ${retention}::interval - interval '2 days', now() - ${retention}::interval - interval '1 day'),
      ('rita', 'alarm.triggered', 'rita@example.com', '{}', 'delivered', now() - interval '2 days', now() - interval '1 day')`;
  try {
    t.is(await trigger('700'), 1);
    await until('rita\'s new e-mail settled', async () => (await messagesOf('rita')).every((m) => m.status !== 'pending'));
  } finally {
    await db.sql`update market.coin_state set price = 100 where coin_id = 501`;
  }
  const kept = await db.sql<{ settled_at: Date }[]>`select settled_at from app.email_messages where owner = 'rita' order by settled_at`;
  t.is(kept.length, 2, 'the one settled before the retention is gone, the recent one and the new one stay');
  t.true(kept.every((row) => Date.now() - row.settled_at.getTime() < 3 * 86_400_000));
});

test.serial('SMTP down: the e-mail is deferred and retried with back-off, then delivered once the server is back', async (t) => {
  await mailbox.stop();
  try {
    await emailAlarm('dan', 'dan@example.com', '200');
    t.is(await trigger('200'), 1);
    await until('a deferred attempt', async () => (await attemptsOf('dan')).filter((a) => a.outcome === 'deferred').length >= 1);
    const [first] = await attemptsOf('dan');
    t.like(first, { outcome: 'deferred', smtp_code: null });
    t.regex(first!.response!, /ECONNREFUSED|ESOCKET|ECONNECTION/);
    t.is((await messagesOf('dan'))[0]!.status, 'pending');
  } finally {
    await mailbox.start();
  }
  await settled('dan');
  t.like((await messagesOf('dan'))[0], { status: 'delivered', smtp_code: 250 });
  const outcomes = (await attemptsOf('dan')).map((a) => a.outcome);
  t.is(outcomes.at(-1), 'delivered');
  t.true(outcomes.slice(0, -1).every((outcome) => outcome === 'deferred'), outcomes.join());
  t.is(sentTo('dan@example.com').length, 1);
});

test.serial('a temporary rejection (451) is deferred and retried; a server down for good fails the e-mail after 4 attempts', async (t) => {
  await emailAlarm('gil', 'greylist-gil@example.com', '300');
  t.is(await trigger('300'), 1);
  await settled('gil');
  t.deepEqual((await attemptsOf('gil')).map((a) => [a.outcome, a.smtp_code]), [['deferred', 451], ['delivered', 250]]);
  t.is(sentTo('greylist-gil@example.com').length, 1);

  // a port nothing listens on: the same worker code, another SMTP_URL
  const gone = await startMailbox();
  await gone.stop();
  await runner.stop();
  runner = await startRunner(gone.url);
  try {
    const [row] = await db.sql<{ id: string }[]>`select app.queue_email('gil', 'alarm.triggered', (select data from app.email_messages where owner = 'gil')) as id`;
    await until('the e-mail settles', async () => (await db.sql`select status from app.email_messages where id = ${row!.id}`)[0]!.status !== 'pending');
    const [failed] = await db.sql`select status, attempts from app.email_messages where id = ${row!.id}`;
    t.deepEqual({ ...failed }, { status: 'failed', attempts: 4 });
    const outcomes = await db.sql`select outcome from app.email_attempts where message_id = ${row!.id} order by id`;
    t.deepEqual(outcomes.map((a) => a.outcome), ['deferred', 'deferred', 'deferred', 'deferred']);
  } finally {
    await runner.stop();
    runner = await startRunner(mailbox.url);
  }
});

test.serial('a bad address is recorded as bounced, not retried, and the alarm is still triggered', async (t) => {
  const alarmId = await emailAlarm('bea', 'bounce-bea@example.com', '400');
  t.is(await trigger('400'), 1);
  await settled('bea');
  const [message] = await messagesOf('bea');
  t.like(message, { status: 'bounced', attempts: 1, smtp_code: 550 });
  t.regex(message!.error!, /No such user/);
  // the job row goes when graphile-worker completes the task, just after the attempt is recorded;
  // a retry, had one been queued, would run 50 ms later and show as a second attempt
  await until('no send_email job left', async () => (await sendJobs()) === 0);
  t.deepEqual((await attemptsOf('bea')).map((a) => [a.outcome, a.smtp_code]), [['bounced', 550]], 'one attempt, no retry');
  t.is(sentTo('bounce-bea@example.com').length, 0);
  t.is((await db.sql`select status from app.alarms where id = ${alarmId}`)[0]!.status, 'triggered');
});

test.serial('an owner with no address (removed after the alarm was made) is recorded as skipped, nothing sent', async (t) => {
  await emailAlarm('sam', 'sam@example.com', '500');
  await db.sql`delete from app.owners where owner = 'sam'`;
  t.is(await trigger('500'), 1);
  t.like((await messagesOf('sam'))[0], { status: 'skipped', recipient: null, attempts: 0 });
  t.is(await sendJobs(), 0);
});

test.serial('a worker killed mid-send: the e-mail is sent again with the same Message-ID and accepted exactly once', async (t) => {
  await emailAlarm('kim', 'kim@example.com', '600');
  // The shared runner must not take this job: stop it until the crash is staged.
  await runner.stop();
  mailbox.hold();
  t.is(await trigger('600'), 1);
  const seenBefore = mailbox.seen.length;
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('../mail/worker_process.ts', import.meta.url).pathname, db.url, mailbox.url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    // the server has the whole message and has not answered it: the send is in flight
    await mailbox.waitFor(seenBefore + 1);
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((resolve) => child.once('exit', resolve));
  t.is(sentTo('kim@example.com').length, 0, 'never accepted: the worker died before the 250');
  t.deepEqual((await attemptsOf('kim')).map((a) => a.outcome), [null], 'its attempt is on record, without an outcome');

  // past the heartbeat bound (aged here instead of waited for) the dead worker's lock goes
  await db.sql`update graphile_worker._private_jobs set locked_at = locked_at - interval '3 minutes' where locked_at is not null`;
  t.is((await db.sql`select app.release_dead_workers(interval '30 seconds') as n`)[0]!.n, 1);
  runner = await startRunner(mailbox.url);
  await settled('kim');
  t.deepEqual((await attemptsOf('kim')).map((a) => a.outcome), ['interrupted', 'delivered']);
  const [message] = await messagesOf('kim');
  t.like(message, { status: 'delivered', attempts: 2 });
  const sends = mailbox.seen.filter((mail) => mail.envelope.to.includes('kim@example.com'));
  t.is(sends.length, 2, 'sent twice over the wire');
  t.is(sends[0]!.headers['message-id'], `<${message!.id}@api.example.com>`);
  t.is(sends[1]!.headers['message-id'], sends[0]!.headers['message-id'], 'the same Message-ID on both');
  t.is(sends[1]!.headers.date, sends[0]!.headers.date, 'the same Date');
  t.is(sentTo('kim@example.com').length, 1, 'accepted exactly once');
});

test.serial('deprecation notices reach each key holder who called the route in the last 90 days, once', async (t) => {
  const route = (path: string, sunset: string) => defineRoute({
    method: 'get', path, operationId: `old${path}`, tag: 'Meta', plan: 'free', summary: 'old',
    deprecated: { sunset, changelog: '1.2.0-deprecated', since: '2026-01-01' }, handler: async () => ({}),
  });
  const routes = [route('/old-thing', '2027-06-30'), defineRoute({ method: 'get', path: '/kept', operationId: 'kept', tag: 'Meta', plan: 'free', summary: 'kept', handler: async () => ({}) })];
  const key = async (owner: string) =>
    (await db.sql<{ id: string }[]>`
      insert into app.api_keys (key_hash, prefix, owner, plan, scope)
      values (sha256(${owner + Math.random()}::bytea), 'mdk_test', ${owner}, 'free', 'data-api') returning id`)[0]!.id;
  const called = async (keyId: string, endpoint: string, ago: string) =>
    db.sql`insert into app.usage_endpoints (key_id, month, endpoint, requests, last_called_at)
      values (${keyId}, date_trunc('month', now() - ${ago}::interval)::date, ${endpoint}, 3, now() - ${ago}::interval)`;
  for (const owner of ['recent', 'twokeys', 'stale', 'other']) await setOwnerEmail(db.sql, owner, `${owner}@example.com`);
  await called(await key('recent'), 'GET /api/v1/old-thing', '10 days');
  await called(await key('twokeys'), 'GET /api/v1/old-thing', '1 day');
  await called(await key('twokeys'), 'GET /api/v1/old-thing', '80 days');
  await called(await key('stale'), 'GET /api/v1/old-thing', '100 days');
  await called(await key('other'), 'GET /api/v1/kept', '1 day');
  await called(await key('nobody-mail'), 'GET /api/v1/old-thing', '2 days');
  // the admission flush writes last_called_at
  const flushed = await key('flushed');
  await setOwnerEmail(db.sql, 'flushed', 'flushed@example.com');
  await db.sql`select * from app.admission_flush(${db.sql.json({
    rates: [], usage: [], reads: [],
    endpoints: [{ key_id: flushed, month: new Date().toISOString().slice(0, 8) + '01', endpoint: 'GET /api/v1/old-thing', requests: 1 }],
  } as never)})`;

  const first = await notifyDeprecations(db.sql, routes);
  t.deepEqual(first, [{
    endpoint: 'GET /api/v1/old-thing', sunset: '2027-06-30',
    queued: ['flushed', 'recent', 'twokeys'], alreadyNotified: [], noAddress: ['nobody-mail'],
  }]);
  await until('three notices', () => mailbox.accepted.filter((mail) => mail.headers['x-service-event'] === 'deprecation.notice').length >= 3);
  const notices = mailbox.accepted.filter((mail) => mail.headers['x-service-event'] === 'deprecation.notice');
  t.deepEqual(notices.map((mail) => mail.envelope.to[0]).sort(), ['flushed@example.com', 'recent@example.com', 'twokeys@example.com']);
  const notice = notices[0]!;
  t.is(notice.headers.subject, 'Deprecation notice: GET /api/v1/old-thing may stop answering after 2027-06-30');
  t.true(notice.text.includes('https://api.example.com/changelog#1.2.0-deprecated'));
  t.true(notice.text.includes('https://api.example.com/versioning'));
  const recorded = await db.sql`
    select n.owner, n.recipient, m.status from app.deprecation_notices n join app.email_messages m on m.id = n.message_id order by n.owner`;
  t.deepEqual(recorded.map((row) => row.owner), ['flushed', 'recent', 'twokeys'], 'what was sent to whom');

  const again = await notifyDeprecations(db.sql, routes);
  t.deepEqual(again[0]!.queued, [], 'never the same notice twice');
  t.deepEqual(again[0]!.alreadyNotified, ['flushed', 'recent', 'twokeys']);
  t.is((await db.sql`select count(*)::int as n from app.email_messages where kind = 'deprecation.notice'`)[0]!.n, 3);
  // a new sunset date is a new notice
  const moved = await notifyDeprecations(db.sql, [route('/old-thing', '2027-12-31')]);
  t.deepEqual(moved[0]!.queued, ['flushed', 'recent', 'twokeys']);
});
