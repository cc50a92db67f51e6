// The real liquidation feed: OKX's public liquidation orders of its swap markets, polled every
// minute for the most valuable coins that have an OKX USDT or USDC swap (one request per
// underlying; ccxt 4.5.84 has no REST method for it, so its generic request carries the call,
// with ccxt's signing-free public path, rate limiter and error mapping, and ccxt's own OKX
// liquidation parser reads the answer). Rows older than the daily rollup's refresh window are
// refreshed into it at once, before retention can drop them.
import type { Exchange } from 'ccxt';
import type { Query } from '../../db/query.ts';
import type { Source } from '../source.ts';
import { BadVenueAnswer } from './answers.ts';

const PAGE = 100;
const MAX_PAGES = 20;

export interface OkxLiquidationsResult {
  underlyings: number;
  received: number;
  inserted: number;
}

interface LiquidationParser {
  parseWsLiquidation(liquidation: unknown, market?: unknown): { symbol?: string; price?: unknown; contracts?: unknown; contractSize?: unknown; side?: string; timestamp?: number };
}

export class OkxLiquidations implements Source<OkxLiquidationsResult> {
  readonly name = 'okx-liquidations';
  readonly #okx: (query: Query) => Promise<Exchange>;
  readonly #underlyings: number;
  readonly #gate: <T>(query: Query, work: () => Promise<T>) => Promise<T>;

  /**
   * okx: the venue's ccxt instance, with its swap markets loaded (shared with the market source);
   * gate: the venue gate the poll passes (src/sources/exchanges/gate.ts throughGate)
   */
  constructor(okx: (query: Query) => Promise<Exchange>, underlyings = 30, gate?: <T>(query: Query, work: () => Promise<T>) => Promise<T>) {
    this.#okx = okx;
    this.#underlyings = underlyings;
    this.#gate = gate ?? ((_query, work) => work());
  }

  run(query: Query): Promise<OkxLiquidationsResult> {
    return this.#gate(query, () => this.#poll(query));
  }

  async #poll(query: Query): Promise<OkxLiquidationsResult> {
    const okx = await this.#okx(query);
    const swaps = await query(
      `select m.symbol, m.exchange_symbol,
         (select (extract(epoch from max(l.time)) * 1000)::bigint from market.liquidations l
          where l.exchange = 'okx' and l.symbol = m.exchange_symbol) as newest
       from market.venue_markets m
       join market.exchanges e on e.id = m.exchange_id and e.slug = 'okx'
       left join market.coin_state s on s.coin_id = m.base_coin_id
       where m.instrument = 'swap' and m.active and m.base_coin_id is not null and m.quote in ('USDT', 'USDC')
       order by s.rank nulls last, m.symbol
       limit $1`,
      [this.#underlyings],
    );
    const rows: Record<string, string | null>[] = [];
    // the feed keeps 48 hours: a first poll, or one after a stop, pages back as far as that, no further
    const horizon = Date.now() - 48 * 3_600_000;
    for (const swap of swaps) {
      const instrument = String(swap.exchange_symbol);
      const stop = Math.max(horizon, swap.newest === null ? 0 : Number(swap.newest));
      let after: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        // newest first, 100 a page; `after` asks for older ones than the oldest seen
        const answer = (await okx.request('public/liquidation-orders', 'public', 'GET', {
          instType: 'SWAP',
          state: 'filled',
          uly: instrument.replace(/-SWAP$/, ''),
          ...(after ? { after } : {}),
        })) as { data?: { instId?: string; details?: { ts?: string }[] }[] } | undefined;
        if (!answer || !Array.isArray(answer.data)) throw new BadVenueAnswer(`okx liquidation orders for ${instrument}: no data`);
        let oldest = Infinity;
        for (const entry of answer.data) {
          for (const detail of entry.details ?? []) {
            const parsed = (okx as unknown as LiquidationParser).parseWsLiquidation({ ...entry, details: [detail] });
            if (typeof parsed.timestamp !== 'number' || parsed.price === undefined || parsed.contracts === undefined) {
              throw new BadVenueAnswer(`okx liquidation orders for ${instrument}: a detail that is no liquidation (${JSON.stringify(detail).slice(0, 80)})`);
            }
            if (parsed.timestamp < stop) continue;
            oldest = Math.min(oldest, parsed.timestamp);
            rows.push({
              symbol: parsed.symbol ?? null,
              instId: entry.instId ?? null,
              ts: String(parsed.timestamp),
              price: text(parsed.price),
              contracts: text(parsed.contracts),
              contractSize: text(parsed.contractSize),
              side: parsed.side ?? null,
            });
          }
        }
        const count = answer.data.reduce((sum, entry) => sum + (entry.details?.length ?? 0), 0);
        // a short page is the last; an older page would only bring what is stored or past the feed's 48 hours
        if (count < PAGE || !Number.isFinite(oldest) || oldest <= stop) break;
        after = String(oldest);
      }
    }
    const [written] = await query('select inserted, earliest, earliest < now() - interval \'46 hours\' as old from market.ingest_okx_liquidations($1::text::jsonb)', [
      JSON.stringify(rows),
    ]);
    if (written?.old) {
      await query(`call refresh_continuous_aggregate('market.liquidations_1d', date_trunc('day', $1::timestamptz, 'UTC'), null)`, [written.earliest]);
    }
    return { underlyings: swaps.length, received: rows.length, inserted: Number(written?.inserted ?? 0) };
  }
}

const text = (value: unknown) => (value === undefined || value === null ? null : String(value));
