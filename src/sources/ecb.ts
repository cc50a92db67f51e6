// The `ecb` FX source: the European Central Bank's daily euro reference rates
// (eurofxref-daily.xml). The ECB quotes units per EUR; market.store_ecb_rates turns them into units
// per USD in numeric. Rates stay decimal strings from the XML to the database, never JS floats.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Query } from '../db/query.ts';
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

/** The document's <Cube> elements, attributes as strings (never numbers: rates stay decimal text). */
const PARSER = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name) => name === 'Cube',
});
interface Cube {
  time?: string;
  currency?: string;
  rate?: string;
  Cube?: Cube[];
  '#text'?: string;
}

/**
 * Parses eurofxref-daily.xml: one day's cube of <Cube currency='USD' rate='1.1787'/> entries.
 * Strict, because a half-read document must not replace good rates: it must be well-formed XML
 * with the gesmes envelope, there must be exactly one day, every entry must be a three-letter code
 * with a positive decimal rate, each code once, and USD must be there (it converts the rest to USD).
 */
export function parseEcbDaily(xml: string): EcbDay {
  const valid = XMLValidator.validate(xml);
  const document = valid === true ? (PARSER.parse(xml) as Record<string, { Cube?: Cube[] } | undefined>) : null;
  const envelope = document?.['gesmes:Envelope'];
  if (!envelope) {
    const why = valid === true ? 'gesmes:Envelope missing' : `line ${valid.err.line}: ${valid.err.msg}`;
    throw new EcbFormatError(`not a complete eurofxref document (${why}).`);
  }
  const days = (envelope.Cube ?? []).flatMap((outer) => outer.Cube ?? []);
  if (days.length !== 1 || !days[0]!.time) throw new EcbFormatError(`expected one dated <Cube time=...>, found ${days.length}.`);
  const day = days[0]!;
  const date = day.time!;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) {
    throw new EcbFormatError(`invalid reference date "${date}".`);
  }
  // anything in the day's cube besides rate entries means the format changed or broke
  if (day['#text']?.trim()) throw new EcbFormatError(`unexpected content in the cube of ${date}: "${day['#text'].trim().slice(0, 60)}".`);
  const ratesPerEur: Record<string, string> = {};
  for (const entry of day.Cube ?? []) {
    const { currency, rate, ...rest } = entry;
    if (currency === undefined || rate === undefined || Object.keys(rest).length > 0) {
      throw new EcbFormatError(`unexpected entry in the cube of ${date}: ${JSON.stringify(entry).slice(0, 60)}.`);
    }
    if (!/^[A-Z]{3}$/.test(currency)) throw new EcbFormatError(`invalid currency code "${currency}" on ${date}.`);
    if (!/^\d+(\.\d+)?$/.test(rate) || !/[1-9]/.test(rate)) throw new EcbFormatError(`invalid rate "${rate}" for ${currency} on ${date}.`);
    if (currency in ratesPerEur) throw new EcbFormatError(`${currency} appears twice on ${date}.`);
    ratesPerEur[currency] = rate;
  }
  if (!ratesPerEur.USD) throw new EcbFormatError(`no USD rate on ${date}: the rates cannot be converted to units per USD.`);
  return { date, ratesPerEur };
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
