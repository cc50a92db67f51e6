// The configured venues as rows of market.exchanges: curated metadata (venues.json) where we have
// it, ccxt's name and site otherwise; a ccxt id beyond the supported venues labelled unverified.
// Loaded again only when the venue list or the metadata change.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Exchange } from 'ccxt';
import type { Query } from '../../db/query.ts';
import { isVenueId } from './venues.ts';

interface VenueMetadata {
  slug: string;
  name: string;
  taxonomy?: string[];
  established?: string;
  location?: string;
  website?: string;
  /** false: a ccxt id beyond the supported venues (market.exchanges.verified) */
  verified?: boolean;
}

const text = readFileSync(new URL('./venues.json', import.meta.url), 'utf8');
const curated = new Map((JSON.parse(text) as { venues: VenueMetadata[] }).venues.map((venue) => [venue.slug, venue]));

export async function ensureVenueCatalogue(query: Query, ids: string[], exchange: (id: string) => Exchange): Promise<boolean> {
  const hash = createHash('sha256').update(text).update(ids.join(',')).digest('hex').slice(0, 16);
  const [row] = await query(`select settings ->> 'venues_hash' as hash from market.data_sources where name = 'exchanges'`);
  if (row?.hash === hash) return false;
  const rows = ids.map((id): VenueMetadata => {
    const known = curated.get(id);
    if (known) return { ...known, verified: isVenueId(id) };
    const ccxt = exchange(id);
    const www = (ccxt.urls as { www?: string | string[] }).www;
    return {
      slug: id,
      name: ccxt.name ?? id,
      location: Array.isArray(ccxt.countries) && ccxt.countries[0] ? String(ccxt.countries[0]) : undefined,
      website: typeof www === 'string' ? www : Array.isArray(www) ? www[0] : undefined,
      verified: isVenueId(id),
    };
  });
  await query('select market.load_exchange_venues($1::text::jsonb)', [JSON.stringify(rows)]);
  await query(`update market.data_sources set settings = settings || jsonb_build_object('venues_hash', $1::text) where name = 'exchanges'`, [hash]);
  return true;
}
