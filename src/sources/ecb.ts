// The `ecb` FX source: the European Central Bank's daily euro reference rates
// (eurofxref-daily.xml). The ECB quotes units per EUR; market.store_ecb_rates turns them into units
// per USD in numeric. Rates stay decimal strings from the XML to the database, never JS floats.
import type { Query } from './aggregates.ts';
import type { Source } from './source.ts';

export const ECB_DAILY_URL = 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml';

/** A response that is not a well-formed ECB reference-rate document; nothing is stored. */
export class EcbFormatError extends Error {
  constructor(message: string) {
    super(`ECB reference rates: ${message}`);
    this.name = 'EcbFormatError';
  }
}

export interface EcbDay {
  /** the rates' reference date, YYYY-MM-DD */
  date: string;
  /** ISO code -> units per 1 EUR, as published (decimal string) */
  ratesPerEur: Record<string, string>;
}

export type Fetch = (url: string, init?: { signal?: AbortSignal; headers?: Record<string, string> }) => Promise<{ ok: boolean; status: number; text(): Promise<string> }>;

const DAY_CUBE = /<Cube\s+time\s*=\s*(['"])(\d{4}-\d{2}-\d{2})\1\s*>([\s\S]*?)<\/Cube>/g;
const RATE_CUBE = /<Cube\s+currency\s*=\s*(['"])([^'"]*)\1\s+rate\s*=\s*(['"])([^'"]*)\3\s*\/>/g;

/**
 * Parses eurofxref-daily.xml: one day's cube of <Cube currency='USD' rate='1.1787'/> entries.
 * Strict, because a half-read document must not replace good rates: the envelope must be
 * complete, there must be exactly one day, every entry must be a three-letter code with a
 * positive decimal rate, each code once, and USD must be there (it converts the rest to USD).
 */
export function parseEcbDaily(xml: string): EcbDay {
  if (!/<gesmes:Envelope[\s>]/.test(xml) || !/<\/gesmes:Envelope>\s*$/.test(xml)) {
    throw new EcbFormatError('not a complete eurofxref document (gesmes:Envelope missing or truncated).');
  }
  const days = [...xml.matchAll(DAY_CUBE)];
  if (days.length !== 1) throw new EcbFormatError(`expected one dated <Cube time=...>, found ${days.length}.`);
  const [, , date, body] = days[0]!;
  if (Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) {
    throw new EcbFormatError(`invalid reference date "${date}".`);
  }
  const ratesPerEur: Record<string, string> = {};
  const entries = [...body!.matchAll(RATE_CUBE)];
  // anything in the day's cube besides well-formed entries means the format changed or broke
  const leftover = body!.replace(RATE_CUBE, '').trim();
  if (leftover) throw new EcbFormatError(`unexpected content in the cube of ${date}: "${leftover.slice(0, 60)}".`);
  for (const [, , currency, , rate] of entries) {
    if (!/^[A-Z]{3}$/.test(currency!)) throw new EcbFormatError(`invalid currency code "${currency}" on ${date}.`);
    if (!/^\d+(\.\d+)?$/.test(rate!) || !/[1-9]/.test(rate!)) throw new EcbFormatError(`invalid rate "${rate}" for ${currency} on ${date}.`);
    if (currency! in ratesPerEur) throw new EcbFormatError(`${currency} appears twice on ${date}.`);
    ratesPerEur[currency!] = rate!;
  }
  if (!ratesPerEur.USD) throw new EcbFormatError(`no USD rate on ${date}: the rates cannot be converted to units per USD.`);
  return { date: date!, ratesPerEur };
}

/** Downloads and parses the daily document; `fetchFn` is injectable so tests replay recorded responses. */
export async function fetchEcbDaily(fetchFn: Fetch = fetch, url = ECB_DAILY_URL, timeoutMs = 15_000): Promise<EcbDay> {
  const response = await fetchFn(url, { signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/xml, text/xml' } });
  if (!response.ok) throw new EcbFormatError(`HTTP ${response.status} from ${url}.`);
  return parseEcbDaily(await response.text());
}

/** Stores one day (market.store_ecb_rates: units per USD, source ecb); returns the rows written. */
export async function storeEcbDay(query: Query, day: EcbDay): Promise<number> {
  const [row] = await query('select market.store_ecb_rates($1::date, $2::text::jsonb) as rows', [day.date, JSON.stringify(day.ratesPerEur)]);
  return Number(row!.rows);
}

/** Fetch, parse, store. On any failure it throws before writing: the previous rates stay current. */
export async function refreshEcbRates(query: Query, fetchFn: Fetch = fetch, url = ECB_DAILY_URL): Promise<{ date: string; rows: number }> {
  const day = await fetchEcbDaily(fetchFn, url);
  return { date: day.date, rows: await storeEcbDay(query, day) };
}

/** The ECB's daily reference rates as a source (FX_SOURCE=ecb). */
export const ecbRates = (fetchFn: Fetch = fetch, url = ECB_DAILY_URL): Source<{ date: string; rows: number }> => ({
  name: 'ecb',
  run: (query) => refreshEcbRates(query, fetchFn, url),
});
