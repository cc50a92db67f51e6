// The curated coin catalogue: the shipped file is well-formed (≥300 coins, unique slugs and ranks,
// consistent supplies, well-formed contracts, shared symbols resolved), imports whole over the demo
// market's coins without taking them over, re-imports as a no-op, and a bad file writes nothing
// and names the JSON path of each fault.
import test from 'ava';
import { createHash } from 'node:crypto';
import { Decimal } from 'decimal.js';
import {
  CatalogueImportError,
  ensureCoinCatalogue,
  importCoins,
  readShippedCatalogue,
  type CatalogueFile,
} from '../../src/sources/catalogue/index.ts';
import { ensureCatalogue as ensureDemoCatalogue, readCatalogue as readDemoCatalogue } from '../../src/sources/simulated/index.ts';
import { testDatabase, type TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await testDatabase();
});
test.after.always(() => db?.close());

const shipped = readShippedCatalogue();

/** Every row the import may write, in a stable order: equal snapshots mean nothing changed. */
const snapshot = async () =>
  (
    await db.sql`
      select
        (select string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', slug, symbol, name, type, status, source, circulating_supply,
           total_supply, max_supply, decimals, catalogue_rank, peg), ';' order by slug) from market.coins) as coins,
        (select string_agg(format('%s|%s|%s|%s', coin_id, type, url, position), ';' order by coin_id, type, url) from market.coin_links) as links,
        (select string_agg(format('%s|%s|%s', coin_id, chain, address), ';' order by coin_id, chain) from market.coin_contracts) as contracts,
        (select string_agg(format('%s|%s|%s', coin_id, locale, md5(html)), ';' order by coin_id, locale) from market.coin_descriptions) as descriptions,
        (select string_agg(format('%s|%s|%s', coin_id, source, external_id), ';' order by coin_id, source) from market.coin_source_ids) as ids,
        (select string_agg(format('%s|%s|%s', exchange, symbol, coin_id), ';' order by exchange, symbol) from market.venue_symbol_overrides) as overrides`
  )[0];

const venueCoins = async (exchange: string, symbols: string[]) =>
  Object.fromEntries(
    (await db.sql`select v.symbol, c.slug from market.venue_coins(${exchange}, ${symbols}) v left join market.coins c on c.id = v.coin_id`).map(
      (r) => [r.symbol, r.slug],
    ),
  );

// Base58 (Bitcoin alphabet), for Solana and TRON addresses.
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
function base58(text: string): Buffer | null {
  let value = 0n;
  for (const char of text) {
    const digit = BASE58.indexOf(char);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const hex = value === 0n ? '' : value.toString(16).padStart(Math.ceil(value.toString(16).length / 2) * 2, '0');
  const zeros = text.match(/^1*/)![0].length;
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, 'hex')]);
}
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest();

test('the shipped catalogue: at least 300 coins, unique slugs, ranks 1..n, every coin described', (t) => {
  const coins = shipped.coins;
  t.true(coins.length >= 300, `${coins.length} coins`);
  t.is(new Set(coins.map((c) => c.slug)).size, coins.length);
  t.deepEqual(
    coins.map((c) => c.rank),
    coins.map((_, i) => i + 1),
    'every coin has its rank, in file order',
  );
  for (const c of coins) {
    t.regex(c.descriptions?.en ?? '', /^<p>[^<>]+<\/p>$/, `${c.slug}: one English paragraph`);
    // <symbol>-<name slug>, the symbol being CoinPaprika's (iota is still miota-iota there)
    if (c.ids?.coinpaprika) t.regex(c.ids.coinpaprika, /^[a-z0-9]+-[a-z0-9]+(-[a-z0-9]+)*$/, `${c.slug}: CoinPaprika id`);
  }
  t.true(coins.filter((c) => (c.links ?? []).some((l) => l.type === 'website')).length >= 290, 'nearly every coin has its website');
  t.true(coins.filter((c) => c.ids?.coinpaprika).length >= 50, 'the largest coins have their CoinPaprika id');
  const bySlug = new Map(coins.map((c) => [c.slug, c]));
  for (const slug of ['bitcoin', 'ethereum', 'tether', 'usd-coin', 'wrapped-bitcoin']) t.truthy(bySlug.get(slug), slug);
  t.is(bySlug.get('tether')!.stablecoin, 'USD');
  t.is(bySlug.get('euro-coin')!.stablecoin, 'EUR');
  t.is(bySlug.get('bitcoin')!.stablecoin, undefined);
});

test('the shipped catalogue: supplies are consistent decimals (circulating ≤ total ≤ max)', (t) => {
  for (const c of shipped.coins) {
    const [circulating, total, max] = [c.circulating_supply, c.total_supply, c.max_supply].map((v) => (v ? new Decimal(v) : null));
    if (circulating && total) t.true(circulating.lte(total), `${c.slug}: circulating ≤ total`);
    if (circulating && max) t.true(circulating.lte(max), `${c.slug}: circulating ≤ max`);
    if (total && max) t.true(total.lte(max), `${c.slug}: total ≤ max`);
  }
  t.is(shipped.coins.find((c) => c.slug === 'ethereum')!.max_supply, null, 'uncapped: null');
});

test('the shipped catalogue: contracts are well-formed addresses of their chain, each on one coin', (t) => {
  const evm = new Set(['ethereum', 'arbitrum-one', 'base', 'optimism']);
  let count = 0;
  for (const c of shipped.coins) {
    for (const { chain, address } of c.contracts ?? []) {
      count++;
      t.is(c.type, 'token', `${c.slug}: a contract makes a token`);
      if (evm.has(chain)) t.regex(address, /^0x[0-9a-fA-F]{40}$/, `${c.slug} on ${chain}`);
      else if (chain === 'solana') t.is(base58(address)?.length, 32, `${c.slug} on solana: 32 bytes of base58`);
      else if (chain === 'tron') {
        // base58check: version 0x41, 20 bytes, 4 bytes of double-SHA-256 checksum
        const bytes = base58(address)!;
        t.is(bytes.length, 25);
        t.is(bytes[0], 0x41);
        t.deepEqual(bytes.subarray(21), sha256(sha256(bytes.subarray(0, 21))).subarray(0, 4), `${c.slug} on tron: checksum`);
      } else t.fail(`${c.slug}: unexpected chain ${chain}`);
    }
  }
  t.true(count >= 100, `${count} contracts`);
  const tether = shipped.coins.find((c) => c.slug === 'tether')!;
  t.deepEqual(
    tether.contracts!.map((k) => `${k.chain}:${k.address}`),
    ['ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7', 'tron:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 'solana:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB'],
  );
});

test('the shipped catalogue: a symbol shared by several coins is resolved, by a venue override or by rank', (t) => {
  const bySymbol = new Map<string, CatalogueFile['coins']>();
  for (const c of shipped.coins) bySymbol.set(c.symbol.toUpperCase(), [...(bySymbol.get(c.symbol.toUpperCase()) ?? []), c]);
  const shared = [...bySymbol].filter(([, coins]) => coins.length > 1);
  t.deepEqual(shared.map(([symbol]) => symbol), ['NEIRO'], 'the shared symbols are known');
  const slugs = new Set(shipped.coins.map((c) => c.slug));
  for (const [symbol, coins] of shared) {
    // the documented rule: the best-ranked coin wins where no venue says otherwise
    t.is(new Set(coins.map((c) => c.rank)).size, coins.length, `${symbol}: distinct ranks decide`);
    const overridden = shipped.venue_symbols!.filter((v) => v.symbol === symbol);
    t.true(overridden.length > 0, `${symbol}: at least one venue override`);
  }
  for (const override of shipped.venue_symbols!) if (override.coin) t.true(slugs.has(override.coin), `${override.exchange} ${override.symbol}`);
});

test.serial('the shipped catalogue imports over the demo market: links, contracts, descriptions, ids; the demo coins keep source and status', async (t) => {
  await ensureDemoCatalogue(db.query);
  const demo = readDemoCatalogue().coins.map((c) => c.slug);
  const demoBefore = await db.sql`select slug, source, status, status_updated_at from market.coins order by slug`;
  const [{ de }] = (await db.sql`select count(*)::int as de from market.coin_descriptions where locale = 'de'`) as unknown as [{ de: number }];
  t.true(de > 0);

  const shippedSlugs = new Set(shipped.coins.map((c) => c.slug));
  const overlap = demo.filter((slug) => shippedSlugs.has(slug)).length;
  const result = await importCoins(db.query, JSON.stringify(shipped));
  t.like(result, { coins: shipped.coins.length, inserted: shipped.coins.length - overlap, venue_symbols: shipped.venue_symbols!.length });
  t.true(result.updated > 0 && result.updated <= overlap);

  const [counts] = await db.sql`
    select count(*) filter (where source = 'catalogue')::int as catalogue,
      count(*) filter (where source = 'catalogue' and status = 'untracked')::int as untracked,
      count(*) filter (where catalogue_rank is not null)::int as ranked,
      (select count(distinct coin_id)::int from market.coin_links) as with_links,
      (select count(*)::int from market.coin_contracts) as contracts,
      (select count(*)::int from market.coin_descriptions where locale = 'en') as described,
      (select count(*)::int from market.coin_source_ids where source = 'coinpaprika') as paprika
    from market.coins`;
  const expectedContracts = shipped.coins.reduce((n, c) => n + (c.contracts?.length ?? 0), 0);
  t.like(counts, {
    catalogue: shipped.coins.length - overlap,
    untracked: shipped.coins.length - overlap,
    ranked: shipped.coins.length,
    described: new Set([...shippedSlugs, ...demo]).size,
    paprika: shipped.coins.filter((c) => c.ids?.coinpaprika).length,
  });
  t.true(counts!.with_links >= 290);
  t.true(counts!.contracts >= expectedContracts);

  // the demo coins: metadata from the catalogue, source and status their own
  const demoAfter = await db.sql`select slug, source, status, status_updated_at from market.coins where source <> 'catalogue' order by slug`;
  t.deepEqual(demoAfter, demoBefore);
  t.is((await db.sql`select count(*)::int as de from market.coin_descriptions where locale = 'de'`)[0]!.de, de, 'translations kept');
  const [ftx] = await db.sql`select status, source, catalogue_rank from market.coins where slug = 'ftx-token'`;
  t.like(ftx, { status: 'delisted', source: 'simulated' });
  t.truthy(ftx!.catalogue_rank);
  const links = await db.sql`select l.type, l.url from market.coin_links l join market.coins c on c.id = l.coin_id where c.slug = 'bitcoin' order by l.position`;
  t.deepEqual(
    links.map((l) => ({ ...l })),
    shipped.coins.find((c) => c.slug === 'bitcoin')!.links,
  );
  const [usdc] = await db.sql`
    select c.peg, c.source, (select count(*)::int from market.coin_contracts k where k.coin_id = c.id) as contracts,
      (select external_id from market.coin_source_ids s where s.coin_id = c.id and s.source = 'coinpaprika') as paprika
    from market.coins c where slug = 'usd-coin'`;
  t.like(usdc, { peg: 'USD', source: 'simulated', contracts: 4, paprika: 'usdc-usd-coin' });

  // venue symbols: overrides first, else the best-ranked coin
  t.deepEqual(await venueCoins('binance', ['NEIRO', 'BEAMX', 'BTC', 'XYZNOTACOIN']), {
    NEIRO: 'first-neiro-on-ethereum',
    BEAMX: 'beam-2',
    BTC: 'bitcoin',
    XYZNOTACOIN: null,
  });
  t.deepEqual(await venueCoins('okx', ['NEIROETH', 'NEIRO']), { NEIROETH: 'neiro-eth', NEIRO: 'first-neiro-on-ethereum' });
});

test.serial('importing the same catalogue again writes nothing; ensureCoinCatalogue imports each version once', async (t) => {
  const before = await snapshot();
  const again = await importCoins(db.query, JSON.stringify(shipped));
  t.like(again, { inserted: 0, updated: 0, rows_written: 0 });
  t.deepEqual(await snapshot(), before);
  t.true(await ensureCoinCatalogue(db.query), 'this version was not recorded yet');
  t.false(await ensureCoinCatalogue(db.query), 'now it is');
  t.deepEqual(await snapshot(), before);
});

test.serial('a bad file writes nothing and names the JSON path of every fault', async (t) => {
  const before = await snapshot();
  const base = { version: 1, coins: [{ rank: 1, slug: 'new-coin', symbol: 'NEW', name: 'New Coin', type: 'token' }] };
  const cases: [unknown, RegExp[]][] = [
    [{ ...base, coins: [...base.coins, { slug: 'other', symbol: 'OTH', name: 'Other', type: 'chain' }] }, [/^coins\[1\]\.type: /]],
    [{ ...base, coins: [...base.coins, { slug: 'Bad_Slug', symbol: 'BAD', name: 'Bad', type: 'coin' }] }, [/^coins\[1\]\.slug: Must be a slug/]],
    [{ ...base, coins: [...base.coins, { slug: 'new-coin', symbol: 'NEW', name: 'Again', type: 'coin' }] }, [/^coins\[1\]\.slug: Repeats the slug new-coin of item 0/]],
    [{ ...base, coins: [{ ...base.coins[0], circulating_supply: 12.5, links: [{ type: 'homepage', url: 'ftp://x' }] }] }, [
      /^coins\[0\]\.circulating_supply: /,
      /^coins\[0\]\.links\[0\]\.type: /,
      /^coins\[0\]\.links\[0\]\.url: Must be an http\(s\) URL/,
    ]],
    [{ ...base, coins: [{ ...base.coins[0], colour: 'red' }] }, [/^coins\[0\]: .*colour/]],
    [{ coins: base.coins }, [/^version: /]],
  ];
  for (const [file, messages] of cases) {
    const error = await t.throwsAsync(importCoins(db.query, JSON.stringify(file)), { instanceOf: CatalogueImportError });
    t.is(error!.problems.length, messages.length, error!.problems.join('\n'));
    messages.forEach((message, i) => t.regex(error!.problems[i] ?? '', message));
  }
  await t.throwsAsync(importCoins(db.query, '{"version": 1, "coins": ['), { instanceOf: CatalogueImportError, message: /not readable JSON/ });
  // valid for zod, refused by the database (an override naming a coin that exists nowhere): the new coin is not written either
  const unknown = { ...base, venue_symbols: [{ exchange: 'kucoin', symbol: 'NEW', coin: 'no-such-coin' }] };
  const error = await t.throwsAsync(importCoins(db.query, JSON.stringify(unknown)), { instanceOf: CatalogueImportError });
  t.regex(error!.problems[0]!, /venue_symbols\[0\]\.coin: unknown coin "no-such-coin"/);
  t.deepEqual(await snapshot(), before, 'nothing written');
});

test.serial('a later file updates a coin and replaces its links; a null override unmaps a venue symbol', async (t) => {
  const update = {
    version: 2,
    venue_symbols: [...shipped.venue_symbols!, { exchange: 'kucoin', symbol: 'PEPE', coin: null }],
    coins: [
      {
        rank: 41,
        slug: 'pepe',
        symbol: 'PEPE',
        name: 'Pepe the Frog',
        type: 'token',
        links: [{ type: 'website', url: 'https://www.pepe.vip' }],
        descriptions: { en: '<p>Updated.</p>' },
      },
    ],
  };
  const result = await importCoins(db.query, JSON.stringify(update));
  t.like(result, { coins: 1, inserted: 0, updated: 1, venue_symbols: shipped.venue_symbols!.length + 1 });
  const [pepe] = await db.sql`
    select c.name, c.source, (select count(*)::int from market.coin_links l where l.coin_id = c.id) as links,
      (select count(*)::int from market.coin_contracts k where k.coin_id = c.id) as contracts,
      (select html from market.coin_descriptions d where d.coin_id = c.id and locale = 'en') as en
    from market.coins c where slug = 'pepe'`;
  t.like(pepe, { name: 'Pepe the Frog', source: 'simulated', links: 1, contracts: 1, en: '<p>Updated.</p>' }, 'contracts left out of the file are kept');
  t.deepEqual(await venueCoins('kucoin', ['PEPE']), { PEPE: null });
  t.deepEqual(await venueCoins('binance', ['PEPE']), { PEPE: 'pepe' });
});
