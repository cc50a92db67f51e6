// The mdapi CLI: keys, the psql URL, and finding the database three ways (running embedded
// server, embedded database started for the command, DATABASE_URL).
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { COMMANDS } from '../bin/cli.ts';
import { testDatabase, type TestDatabase } from './helpers/database.ts';
import { embeddedOnly } from './helpers/targets.ts';
import { TEMPLATE_DIR } from './helpers/template.ts';

const run = promisify(execFile);
let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const cli = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['bin/cli.ts', ...args], { env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', ...env } });

const viaRunningServer = (): Record<string, string> => (db.embeddedPort ? { DATA_DIR: db.dataDir!, EMBEDDED_DB_PORT: String(db.embeddedPort) } : { DATABASE_URL: db.url });

test.serial('create-key prints only the key, list-keys shows it without the key, revoke-key revokes it', async (t) => {
  const { stdout } = await cli(['create-key', '--plan', 'pro', '--owner', 'cli-owner'], viaRunningServer());
  t.regex(stdout, /^mdk_[A-Za-z0-9_-]{43}\n$/);
  const key = stdout.trim();
  const [row] = await db.sql`select owner, plan, scope from app.api_keys where prefix = ${key.slice(0, 12)}`;
  t.deepEqual({ ...row }, { owner: 'cli-owner', plan: 'pro', scope: 'data-api' });
  const listed = await cli(['list-keys'], viaRunningServer());
  t.true(listed.stdout.includes(key.slice(0, 12)));
  t.false(listed.stdout.includes(key), 'the key itself is never listed');
  await cli(['revoke-key', key.slice(0, 12)], viaRunningServer());
  const [revoked] = await db.sql`select revoked_at from app.api_keys where prefix = ${key.slice(0, 12)}`;
  t.truthy(revoked!.revoked_at);
  const again = await t.throwsAsync(cli(['revoke-key', key.slice(0, 12)], viaRunningServer()));
  t.regex(String((again as { stderr?: string }).stderr), /no active key/);
});

test.serial('create-account makes a verified account and prints a one-time set-password link (an existing owner keeps its keys); invite prints an invite link', async (t) => {
  await cli(['create-key', '--plan', 'free', '--owner', 'cli-account', '--email', 'old@example.com'], viaRunningServer());
  const { stdout, stderr } = await cli(['create-account', '--email', 'Admin@Example.com', '--admin', '--owner', 'cli-account'], { ...viaRunningServer(), PUBLIC_URL: 'https://api.example.com' });
  t.regex(stdout, /^https:\/\/api\.example\.com\/console\/reset\/set\?token=[\w-]{43}\n$/);
  t.regex(stderr, /made \(admin\)/);
  const [row] = await db.sql`select email, role, email_verified_at is not null as verified, password_hash from app.owners where owner = 'cli-account'`;
  // stored in its canonical form: the domain in lower case
  t.deepEqual({ ...row }, { email: 'Admin@example.com', role: 'admin', verified: true, password_hash: null });
  t.is((await db.sql`select count(*)::int as n from app.api_keys where owner = 'cli-account'`)[0]!.n, 1);

  const twice = await t.throwsAsync(cli(['create-account', '--email', 'admin@example.com'], viaRunningServer()));
  t.regex(String((twice as { stderr?: string }).stderr), /an account with the address admin@example\.com exists/);
  const owned = await t.throwsAsync(cli(['create-account', '--email', 'other@example.com', '--owner', 'cli-account'], viaRunningServer()));
  t.regex(String((owned as { stderr?: string }).stderr), /the owner cli-account is a console account already/);
  t.is((await db.sql`select email from app.owners where owner = 'cli-account'`)[0]!.email, 'Admin@example.com');
  const bad = await t.throwsAsync(cli(['create-account', '--email', 'nope'], viaRunningServer()));
  t.regex(String((bad as { stderr?: string }).stderr), /--email must be an e-mail address/);
  t.regex((await cli(['create-account', '--help'], viaRunningServer())).stdout, /create-account --email ADDR \[--admin\] \[--owner NAME\]/);

  const closed = await t.throwsAsync(cli(['invite', '--email', 'guest@example.com'], viaRunningServer()));
  t.regex(String((closed as { stderr?: string }).stderr), /CONSOLE_SIGNUP is closed/);
  const invite = await cli(['invite', '--email', 'guest@example.com'], { ...viaRunningServer(), CONSOLE_SIGNUP: 'invite' });
  t.regex(invite.stdout, /^http:\/\/127\.0\.0\.1:3000\/console\/invite\?token=[\w-]{43}\n$/);
  t.is((await db.sql`select count(*)::int as n from app.console_tokens where purpose = 'invite' and email = 'guest@example.com'`)[0]!.n, 1);
});

test.serial('create-key --email and set-email record the owner\'s address, unverified unless --verified; bad addresses are refused', async (t) => {
  await cli(['create-key', '--plan', 'free', '--owner', 'mailer', '--email', 'first@example.com'], viaRunningServer());
  const owner = async () => ({ ...(await db.sql`select email, email_verified_at is not null as verified from app.owners where owner = 'mailer'`)[0] });
  t.deepEqual(await owner(), { email: 'first@example.com', verified: false });
  const set = await cli(['set-email', 'mailer', 'second@example.com', '--verified'], viaRunningServer());
  t.regex(set.stderr, /e-mail address of mailer set \(verified\)/);
  t.deepEqual(await owner(), { email: 'second@example.com', verified: true });
  await cli(['set-email', 'mailer', 'third@example.com'], viaRunningServer());
  t.deepEqual(await owner(), { email: 'third@example.com', verified: false }, 'a new address is not verified');
  const noKey = await cli(['set-email', 'keyless', 'k@example.com'], viaRunningServer());
  t.regex(noKey.stderr, /has no key yet/);

  const bad = await t.throwsAsync(cli(['set-email', 'mailer', 'not an address'], viaRunningServer()));
  t.is((bad as { code?: number }).code, 2);
  t.regex(String((bad as { stderr?: string }).stderr), /not an e-mail address/);
  const badKey = await t.throwsAsync(cli(['create-key', '--plan', 'free', '--owner', 'mailer2', '--email', 'x@'], viaRunningServer()));
  t.regex(String((badKey as { stderr?: string }).stderr), /--email must be an e-mail address/);
  t.is((await db.sql`select count(*)::int as n from app.api_keys where owner = 'mailer2'`)[0]!.n, 0, 'no key without its address');
});

test.serial('notify-deprecation needs e-mail configured, and says so when no operation is deprecated', async (t) => {
  const off = await t.throwsAsync(cli(['notify-deprecation'], viaRunningServer()));
  t.is((off as { code?: number }).code, 2);
  t.regex(String((off as { stderr?: string }).stderr), /e-mail is not configured: set SMTP_URL and MAIL_FROM/);
  const noFrom = await t.throwsAsync(cli(['notify-deprecation'], { ...viaRunningServer(), SMTP_URL: 'smtp://127.0.0.1:2525' }));
  t.regex(String((noFrom as { stderr?: string }).stderr), /MAIL_FROM/);
  const on = await cli(['notify-deprecation'], { ...viaRunningServer(), SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'ops@example.com' });
  t.regex(on.stderr, /no operation is deprecated: nothing to send/);
});

test.serial('bad options are refused with a message and exit code 2', async (t) => {
  const error = await t.throwsAsync(cli(['create-key', '--plan', 'gold'], viaRunningServer()));
  t.is((error as { code?: number }).code, 2);
  t.regex(String((error as { stderr?: string }).stderr), /--plan must be/);
});

test.serial('db-url prints the psql URL for the superuser and for the analyst', async (t) => {
  const env = { EMBEDDED_DB_PORT: '54999' };
  t.is((await cli(['db-url'], env)).stdout.trim(), 'postgres://postgres@127.0.0.1:54999/postgres');
  t.is((await cli(['db-url', '--analyst'], env)).stdout.trim(), 'postgres://analyst@127.0.0.1:54999/postgres');
  t.is((await cli(['db-url'], { DATABASE_URL: 'postgres://u:p@db.example:5432/x' })).stdout.trim(), 'postgres://u:p@db.example:5432/x');
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

function scratchDataDir() {
  const dataDir = mkdtempSync(join(tmpdir(), 'mdapi-cli-'));
  cpSync(TEMPLATE_DIR, dataDir, { recursive: true });
  return dataDir;
}

const embedded = embeddedOnly(test, "they start, back up and restore the embedded database's data directory; a server has none here");

embedded.serial('with no embedded server running, the CLI starts one for the command and stops it', async (t) => {
  const dataDir = scratchDataDir();
  const port = await freePort();
  try {
    const { stdout } = await cli(['create-key', '--plan', 'free'], { DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(port) });
    t.regex(stdout, /^mdk_/);
    const listed = await cli(['list-keys'], { DATA_DIR: dataDir, EMBEDDED_DB_PORT: String(port) });
    t.is(listed.stdout.trim().split('\n').length, 1, 'the key persisted in DATA_DIR');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

embedded.serial('a backup taken while the embedded database runs restores into a stopped one', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'mdapi-backup-'));
  const file = join(work, 'backup.tar.gz');
  const restored = scratchDataDir();
  const env = { DATA_DIR: restored, EMBEDDED_DB_PORT: String(await freePort()) };
  try {
    const { stdout } = await cli(['create-key', '--plan', 'starter', '--owner', 'backed-up'], viaRunningServer());
    await cli(['backup', file], viaRunningServer());
    await db.sql`update app.api_keys set owner = 'changed after backup' where prefix = ${stdout.trim().slice(0, 12)}`;
    const done = await cli(['restore', file], env);
    t.regex(done.stderr, /previous database is kept/);
    const listed = await cli(['list-keys'], env);
    t.true(listed.stdout.includes(`${stdout.trim().slice(0, 12)}\tbacked-up\tstarter`));
    const refused = await t.throwsAsync(cli(['restore', file], viaRunningServer()));
    t.regex(String((refused as { stderr?: string }).stderr), /stop the service first/);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(restored, { recursive: true, force: true });
  }
});

// Every command of the CLI's own table: the help of each, and how each refuses a malformed line.
const commands = Object.keys(COMMANDS);
const refused = (error: unknown) => error as { code?: number; stdout?: string; stderr?: string };

/** Runs at most `width` CLI processes at a time (each loads the service's modules). */
async function eachLimited<T>(items: T[], width: number, work: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  }));
}

test.serial('every command answers --help and -h with its own usage and exit 0; mdapi --help lists them all', async (t) => {
  t.true(commands.length >= 15, `${commands.length} commands in the table`);
  const top = await cli(['--help'], {});
  for (const name of commands) t.regex(top.stdout, new RegExp(`^  ${name}\\b`, 'm'), `mdapi --help lists ${name}`);
  await eachLimited(commands, 3, async (name) => {
    for (const flag of ['--help', '-h']) {
      const { stdout } = await cli([name, flag], {});
      t.true(stdout.startsWith(`usage: mdapi ${COMMANDS[name]!.synopsis}\n`), `${name} ${flag}: ${stdout.slice(0, 80)}`);
      t.true(stdout.includes(COMMANDS[name]!.description), `${name} ${flag} describes the command`);
    }
  });
  t.is((await cli(['help', 'backfill'], {})).stdout, (await cli(['backfill', '--help'], {})).stdout);
});

test.serial('an unknown option or a stray argument exits 2 with the command\'s usage on stderr; an unknown command with the list', async (t) => {
  await eachLimited(commands, 3, async (name) => {
    const error = refused(await t.throwsAsync(cli([name, '--no-such-option'], {})));
    t.is(error.code, 2, name);
    t.regex(String(error.stderr), /Unknown option '--no-such-option'/, name);
    t.true(String(error.stderr).includes(`usage: mdapi ${COMMANDS[name]!.synopsis}\n`), `${name} prints its usage`);
  });
  const stray = refused(await t.throwsAsync(cli(['list-keys', 'extra'], {})));
  t.is(stray.code, 2);
  t.regex(String(stray.stderr), /unexpected argument: extra[\s\S]*usage: mdapi list-keys/);
  const unknown = refused(await t.throwsAsync(cli(['frobnicate'], {})));
  t.is(unknown.code, 2);
  t.regex(String(unknown.stderr), /no command "frobnicate"[\s\S]*import-content DIR/);
});

test.serial('a bad slug or date is refused before any work: exit 2 naming the option and the value', async (t) => {
  for (const [args, message] of [
    [['import-candles', '--slug', 'bit_coin', 'x.csv'], /--slug must be a coin slug such as bitcoin \(letters, digits and single dashes, at most 120\), not "bit_coin"/],
    [['import-candles', '--slug', 'bit--coin', 'x.csv'], /--slug must be a coin slug/],
    [['backfill', '--coins', 'bitcoin,Bit Coin'], /--coins must be comma-separated coin slugs/],
    [['backfill', '--coins', ','], /--coins must name at least one coin/],
    [['backfill', '--since', '2026-02-30'], /--since must be a date \(YYYY-MM-DD\), not "2026-02-30"/],
    [['backfill', '--since', '26-01-01'], /--since must be a date \(YYYY-MM-DD\)/],
    [['create-key', '--plan', 'mcp-pro'], /--plan must be free, starter, pro for a data-api key/],
  ] as const) {
    const error = refused(await t.throwsAsync(cli([...args], viaRunningServer())));
    t.is(error.code, 2, args.join(' '));
    t.regex(String(error.stderr), message);
  }
});

test.serial('import-candles takes the coin slug in any case and stores it lowercase', async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'mdapi-candles-'));
  const file = join(work, 'bars.csv');
  writeFileSync(file, 'time,open,high,low,close,volume\n2024-01-01T00:00:00Z,1,2,0.5,1.5,10\n2024-01-02T00:00:00Z,1.5,2,1,1.8,12\n');
  try {
    const { stderr } = await cli(['import-candles', '--slug', 'Mixed-Case-Coin', '--symbol', 'MCC', '--name', 'Mixed Case Coin', file], viaRunningServer());
    t.regex(stderr, /^mixed-case-coin: 2 bars/);
    t.deepEqual((await db.sql`select slug from market.coins where lower(slug) = 'mixed-case-coin'`).map((row) => row.slug), ['mixed-case-coin']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
