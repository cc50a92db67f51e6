// sql/schema.sql, the committed description of the market, api and app schemas, is what the
// migrations and sql/functions build: a change to either without `make schema-dump` fails here.
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { schemaDump } from '../../src/db/schema-dump.ts';
import { testDatabase } from '../helpers/database.ts';
import { embeddedOnly } from '../helpers/targets.ts';

const DUMP = new URL('../../sql/schema.sql', import.meta.url);

const embedded = embeddedOnly(test, 'the dump is made there; a server of another PostgreSQL version describes some defaults differently');

embedded('sql/schema.sql matches the schemas the migrations build', async (t) => {
  const db = await testDatabase();
  try {
    const dump = await schemaDump(db.sql);
    if (process.env.UPDATE_SCHEMA_DUMP) writeFileSync(DUMP, dump);
    const committed = readFileSync(DUMP, 'utf8');
    const [ours, theirs] = [dump.split('\n'), committed.split('\n')];
    const line = ours.findIndex((text, index) => text !== theirs[index]);
    t.true(dump === committed, `sql/schema.sql differs from the migrated schemas from line ${line + 1}:\n  built:     ${ours[line]}\n  committed: ${theirs[line]}\nrun \`make schema-dump\` and review the difference`);
  } finally {
    await db.close();
  }
});
