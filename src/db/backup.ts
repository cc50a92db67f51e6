// Backup and restore. A real server goes through pg_dump/pg_restore (with TimescaleDB's
// pre/post-restore hooks). The embedded database is a directory: it is archived while a
// transaction holds the single backend after a CHECKPOINT, so no other client writes meanwhile.
import { execFile } from 'node:child_process';
import { existsSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config.ts';
import { createSql } from './client.ts';
import { portAnswers } from './embedded/launcher.ts';

const run = promisify(execFile);

export async function backup(config: Config, file: string): Promise<void> {
  const target = resolve(file);
  if (!config.database.embedded) {
    await run('pg_dump', ['--format=custom', `--file=${target}`, config.database.url]);
    return;
  }
  const dataDir = resolve(config.DATA_DIR);
  const archive = () => run('tar', ['-czf', target, '-C', dataDir, 'pgdata']);
  if (!(await portAnswers(config.EMBEDDED_DB_PORT))) {
    await archive();
    return;
  }
  const sql = createSql(config.database, { max: 1 });
  try {
    await sql.begin(async (tx) => {
      await tx`checkpoint`;
      await archive();
    });
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function restore(config: Config, file: string): Promise<string | null> {
  const source = resolve(file);
  if (!existsSync(source)) throw new Error(`no such file: ${file}`);
  if (!config.database.embedded) {
    const url = config.database.url;
    await run('psql', ['-X', '-v', 'ON_ERROR_STOP=1', url, '-c', 'select timescaledb_pre_restore()']);
    try {
      await run('pg_restore', ['--clean', '--if-exists', '--no-owner', `--dbname=${url}`, source]);
    } finally {
      await run('psql', ['-X', '-v', 'ON_ERROR_STOP=1', url, '-c', 'select timescaledb_post_restore()']);
    }
    return null;
  }
  if (await portAnswers(config.EMBEDDED_DB_PORT)) {
    throw new Error(`the embedded database is running on port ${config.EMBEDDED_DB_PORT}: stop the service first`);
  }
  const dataDir = resolve(config.DATA_DIR);
  const current = join(dataDir, 'pgdata');
  // The replaced database is kept beside the new one, never deleted by a restore.
  let kept: string | null = null;
  if (existsSync(current)) {
    kept = join(dataDir, `pgdata.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    renameSync(current, kept);
  }
  try {
    await run('tar', ['-xzf', source, '-C', dataDir, 'pgdata']);
  } catch (error) {
    if (kept) renameSync(kept, current);
    throw error;
  }
  return kept;
}
