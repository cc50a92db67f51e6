// The refresh_sentiment task through graphile-worker: it writes every snapshot, the altseason days
// and the tally, and a second run replaces rather than adds.
import test from 'ava';
import { quickAddJob, runOnce } from 'graphile-worker';
import { crontab, taskList } from '../../jobs/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';
import { DAYS, SENTIMENT_COINS, loadSentimentMarket } from './sentiment_fixture.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
  await loadSentimentMarket(db.sql);
});
test.after.always(() => db?.close());

test('the crontab runs the task every 15 minutes', (t) => {
  t.true(crontab.split('\n').some((line) => /^\*\/15 \* \* \* \* refresh_sentiment\b/.test(line)));
});

test('the task writes the readings, the altseason days and the tally; running it twice keeps one of each', async (t) => {
  const config = db.config();
  const options = { connectionString: config.database.url, noPreparedStatements: true, taskList: taskList(config) };
  const counts = async () =>
    db.sql<{ kind: string; n: number }[]>`select kind, count(*)::int as n from market.sentiment_snapshots group by kind order by kind`;
  for (let run = 0; run < 2; run++) {
    await quickAddJob(options, 'refresh_sentiment', {});
    await runOnce(options);
    const scopes = SENTIMENT_COINS.length + 1;
    t.deepEqual(
      [...(await counts())],
      [{ kind: 'bull_bear', n: scopes }, { kind: 'fear_greed', n: scopes }, { kind: 'indicator_tally', n: 1 }],
    );
    const [days] = await db.sql`select count(*)::int as n from market.altseason_days`;
    t.is(days!.n, DAYS - 90);
    const [states] = await db.sql`select count(*)::int as n from market.tally_coin_states`;
    t.is(states!.n, 18 * SENTIMENT_COINS.length);
  }
  const [failed] = await db.sql`select count(*)::int as n from graphile_worker.jobs`;
  t.is(failed!.n, 0, 'no job left over (none failed)');
});
