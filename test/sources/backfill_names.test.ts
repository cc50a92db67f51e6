// mdapi backfill before the service ever ran, on a fresh database: it loads the coin universe and
// CoinPaprika's coin list before the venues' markets, so the coins the venues bring are named after
// the list's entries (discovered_by metadata); without the list first, each would be named after its
// venue for good (a slug never changes once served). On the loopback replay, never the network.
import test from 'ava';
import { spawn } from 'node:child_process';
import { testDatabase } from '../helpers/database.ts';
import { COINPAPRIKA_PATH, replayEnvironment, startOfflineReplay } from '../../dev/venues/offline.ts';
import type { PaprikaCoin } from '../../dev/venues/metadata.ts';
import { DAY } from '../../dev/venues/replay.ts';

const VENUE = 'gate';

test('a first backfill names the coins its venue brings after the coin list, not after the venue', async (t) => {
  // beyond the catalogue's ~300 coins the replay makes up coins, listed by its CoinPaprika
  const offline = await startOfflineReplay({ coins: 400 });
  const db = await testDatabase();
  try {
    const child = spawn(process.execPath, ['bin/cli.ts', 'backfill', '--coins', 'all', '--interval', 'daily', '--since', new Date(Date.now() - DAY).toISOString().slice(0, 10)], {
      env: { ...process.env, ...replayEnvironment(offline.replay), EXCHANGES: VENUE, EXCHANGE_URLS: `${VENUE}=${offline.replay.baseUrl(VENUE)}`, DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    t.is(code, 0, stderr);
    const discovered = await db.sql<{ slug: string; symbol: string; discovered_by: string }[]>`
      select slug, symbol, discovered_by from market.coins where discovered_by is not null order by slug`;
    const byList = discovered.filter((coin) => coin.discovered_by === 'metadata');
    t.true(byList.length >= 10, `${byList.length} coins named after the coin list`);
    // only a code the list has no active entry for is named after the venue
    const listed = new Set((await (await fetch(`${offline.replay.url}${COINPAPRIKA_PATH}/v1/coins`)).json() as PaprikaCoin[])
      .filter((entry) => entry.is_active).map((entry) => entry.symbol));
    t.deepEqual(discovered.filter((coin) => coin.discovered_by === 'venue' && listed.has(coin.symbol)).map((coin) => coin.slug), []);
    t.false(byList.some((coin) => coin.slug.endsWith(`-${VENUE}`)), 'no slug names the venue');
  } finally {
    await db.close();
    await offline.replay.close();
  }
});
