// The stream holder started before the venues are in the database (a worker's first market job has
// not yet added them to market.exchanges): each ticker feed tries again on a back-off of its own, 2 s
// doubling, not at once and many times a second (each try a market load from the venue and a warning
// in the log), and once the rows are there the venue streams.
import test from 'ava';
import { testDatabase } from '../helpers/database.ts';
import { captureLog } from '../helpers/log.ts';
import { btcStreamVenues, closeStreamVenues, streamReadings } from '../helpers/venue-streams.ts';
import { StreamHolder } from '../../src/sources/stream/index.ts';
import { sleep, until } from '../../dev/wait.ts';

test('a venue not in the database yet is tried again on a back-off; it streams once its rows are there', async (t) => {
  const db = await testDatabase();
  const { replay, streams, config, addRows } = await btcStreamVenues(db, { prices: { binance: '60000.5' }, rows: false });
  const log = captureLog();
  const holder = new StreamHolder(config, log.logger).start();
  try {
    await sleep(5_000);
    const marketLoads = replay.requests('binance')['/api/v3/exchangeInfo'] ?? 0;
    const warnings = log.lines().filter((line) => String(line['msg']).startsWith('live streams: binance (')).map((line) => String(line['msg']));
    // tried at once and 2 s later, the next 4 s after that (past the 5 s); a third allowed for slack
    t.true(marketLoads >= 1 && marketLoads <= 3, `${marketLoads} market loads from binance in 5 s`);
    t.true(warnings.length >= 1 && warnings.length <= 3, `${warnings.length} warnings in 5 s: ${warnings.slice(0, 3).join(' | ')}`);
    t.regex(warnings[0] ?? '', /unknown venue binance.*not in the database yet/);

    await addRows();
    await until('binance streaming', async () => (await streamReadings(db).venuePrice('binance')) === '60000.5', { timeoutMs: 15_000 });
    // the source's health is recorded when the tick's flush ends (a statement later)
    await until('binance up in the source health', async () => (await streamReadings(db).health())?.binance === 'up', { timeoutMs: 5_000 });
  } finally {
    await closeStreamVenues({ holder, streams, replay, db });
  }
});
