// The curated coin catalogue (coins.json here, or any file given to `mdapi import-coins FILE`):
// the coin universe of the real market sources, with links, contracts, descriptions, outside ids
// (CoinPaprika) and per-venue ticker overrides. A file is validated whole with zod, errors naming
// the JSON path (coins[17].slug: ...), then written by market.import_coin_catalogue in one
// statement: all or nothing. The JSON travels as text, so supplies never become JS floats.
import { z } from 'zod';
import type { Query } from '../../db/query.ts';
import { date, ImportRefusedError, locale, storedSlug } from '../../validators.ts';
import { loadCatalogueOnce, shippedCatalogue } from '../source.ts';

export const SOURCE_NAME = 'catalogue';
export const CATALOGUE_PATH = new URL('./coins.json', import.meta.url);

/** A file that cannot be imported; `problems` holds one `path: message` line per fault. Nothing was written. */
export class CatalogueImportError extends ImportRefusedError {}

const slug = storedSlug();
const supply = z
  .string()
  .regex(/^\d+(\.\d+)?$/, 'Must be a non-negative decimal string, e.g. "21000000".')
  .nullable();
const url = z.string().max(2000).regex(/^https?:\/\/\S+$/, 'Must be an http(s) URL.');
const LINK_TYPES = ['website', 'whitepaper', 'explorer', 'source_code', 'twitter', 'reddit', 'telegram', 'discord', 'forum', 'blog', 'facebook', 'youtube', 'other'] as const;

/** A list whose items must not share a key: the issue points at the repeating item. */
const unique = <T>(key: (item: T) => string | undefined, what: string, field?: string) => (items: T[], ctx: z.RefinementCtx) => {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const k = key(item);
    if (k === undefined) return;
    const first = seen.get(k);
    if (first !== undefined) ctx.addIssue({ code: 'custom', path: field ? [index, field] : [index], message: `Repeats the ${what} ${k} of item ${first}.` });
    else seen.set(k, index);
  });
};

const coin = z.strictObject({
  /** rank by market capitalisation when curated: decides shared symbols (see market.venue_coins) */
  rank: z.number().int().min(1).optional(),
  slug,
  symbol: z.string().regex(/^\S{1,20}$/, 'Must be 1-20 characters without spaces.'),
  name: z.string().trim().min(1).max(200),
  type: z.enum(['coin', 'token']),
  circulating_supply: supply.optional(),
  total_supply: supply.optional(),
  max_supply: supply.optional(),
  decimals: z.number().int().min(0).max(36).nullable().optional(),
  genesis_date: date().nullable().optional(),
  logo: url.nullable().optional(),
  /** the fiat currency a stablecoin is pegged to */
  stablecoin: z.string().regex(/^[A-Z]{3}$/, 'Must be an ISO currency code such as USD or EUR.').nullable().optional(),
  links: z
    .array(z.strictObject({ type: z.enum(LINK_TYPES), url }))
    .superRefine(unique((link) => `${link.type} ${link.url}`, 'link', 'url'))
    .optional(),
  contracts: z
    .array(
      z.strictObject({
        chain: slug,
        address: z.string().min(1).max(200).regex(/^\S+$/, 'Must be an address without spaces.'),
        decimals: z.number().int().min(0).max(36).nullable().optional(),
      }),
    )
    .superRefine(unique((contract) => contract.chain, 'chain', 'chain'))
    .optional(),
  descriptions: z.record(locale, z.string().trim().min(1).max(20_000)).optional(),
  ids: z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/, 'Must be a source name such as coinpaprika.'), z.string().min(1).max(200)).optional(),
});

export const catalogueFile = z
  .strictObject({
    version: z.number().int().min(1),
    note: z.string().optional(),
    venue_symbols: z
      .array(
        z.strictObject({
          /** the venue's ccxt id */
          exchange: slug,
          /** its base currency code as ccxt unifies it */
          symbol: z.string().regex(/^[A-Z0-9]{1,40}$/, 'Must be an upper-case currency code as ccxt writes it.'),
          /** the catalogue coin it means; null: none */
          coin: slug.nullable(),
        }),
      )
      .superRefine(unique((entry) => `${entry.exchange} ${entry.symbol}`, 'venue symbol', 'symbol'))
      .optional(),
    coins: z
      .array(coin)
      .min(1)
      .superRefine(unique((c) => c.slug, 'slug', 'slug'))
      .superRefine(unique((c) => (c.rank === undefined ? undefined : String(c.rank)), 'rank', 'rank'))
      .superRefine((coins, ctx) => {
        // a contract belongs to one coin
        const seen = new Map<string, number>();
        coins.forEach((c, index) =>
          c.contracts?.forEach((contract, i) => {
            const key = `${contract.chain} ${contract.address.toLowerCase()}`;
            const first = seen.get(key);
            if (first !== undefined && first !== index) {
              ctx.addIssue({ code: 'custom', path: [index, 'contracts', i, 'address'], message: `Is already the contract of coins[${first}].` });
            }
            seen.set(key, index);
          }),
        );
      }),
  });

export type CatalogueFile = z.infer<typeof catalogueFile>;

/** `coins[17].links[0].url` */
const jsonPath = (path: readonly PropertyKey[]) =>
  path.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)), '');

/** Parses and validates a catalogue file; throws CatalogueImportError listing every problem by JSON path. */
export function parseCatalogue(text: string): CatalogueFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CatalogueImportError('not readable JSON, nothing imported', [(error as Error).message]);
  }
  const parsed = catalogueFile.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const path = jsonPath(issue.path);
      return path ? `${path}: ${issue.message}` : issue.message;
    });
    throw new CatalogueImportError(`${problems.length} problem(s), nothing imported`, problems);
  }
  return parsed.data;
}

export interface CatalogueImportResult {
  coins: number;
  inserted: number;
  updated: number;
  venue_symbols: number;
  /** every row written or removed, the coins' parts included: 0 when the same catalogue is imported again */
  rows_written: number;
}

/** Validates and imports a catalogue, all or nothing. Re-importing the same file writes nothing. */
export async function importCoins(query: Query, text: string): Promise<CatalogueImportResult> {
  parseCatalogue(text);
  try {
    const [row] = await query('select market.import_coin_catalogue($1::text::jsonb) as result', [text]);
    return row!.result as CatalogueImportResult;
  } catch (error) {
    // what zod cannot see (an override naming a coin that is only in the database) comes back as MD422
    const code = (error as { code?: string }).code ?? '';
    if (code === 'MD422' || code.startsWith('23') || code.startsWith('22')) {
      throw new CatalogueImportError('rejected by the database, nothing imported', [(error as Error).message]);
    }
    throw error;
  }
}

const shipped = shippedCatalogue(CATALOGUE_PATH);

/** The shipped catalogue, parsed and validated. */
export const readShippedCatalogue = (): CatalogueFile => parseCatalogue(shipped().text);

/**
 * Imports the shipped catalogue unless this very version is already in the database (its hash is
 * kept in data_sources.settings of `catalogue`). Called by the real market sources before they map
 * venue symbols to coins; the demo market does not need it. Returns whether it imported.
 */
export async function ensureCoinCatalogue(query: Query): Promise<boolean> {
  const { text, hash } = shipped();
  return loadCatalogueOnce(query, SOURCE_NAME, hash, () => importCoins(query, text));
}
