// sql/schema.sql, the committed description of the market, api and app schemas, is what the
// migrations and sql/functions build: a change to either without `make schema-dump` fails here.
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { schemaDump } from '../../src/db/schema-dump.ts';
import { testDatabase } from '../helpers/database.ts';

const DUMP = new URL('../../sql/schema.sql', import.meta.url);

test('sql/schema.sql matches the schemas the migrations build', async (t) => {
  // made on the embedded database: a server of another PostgreSQL version describes some defaults differently
  if (process.env.TEST_DATABASE_URL) return t.pass('checked on the embedded database only');
  const db = await testDatabase();
  try {
    const dump = await schemaDump(db.sql);
    if (process.env.UPDATE_SCHEMA_DUMP) writeFileSync(DUMP, dump);
    const committed = readFileSync(DUMP, 'utf8');
    if (dump === committed) return t.pass();
    const [ours, theirs] = [dump.split('\n'), committed.split('\n')];
    const line = ours.findIndex((text, index) => text !== theirs[index]);
    t.fail(`sql/schema.sql differs from the migrated schemas from line ${line + 1}:\n  built:     ${ours[line]}\n  committed: ${theirs[line]}\nrun \`make schema-dump\` and review the difference`);
  } finally {
    await db.close();
  }
});
