// The mdapi CLI: keys, the psql URL, and finding the database three ways (running embedded
// server, embedded database started for the command, DATABASE_URL).
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
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
