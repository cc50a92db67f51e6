// One case rule for every slug lookup (market.coin_ids, market.exchange_ids): each api function that
// takes a coin, venue, wallet or article slug answers a mixed-case slug exactly as the lowercase one.
// The functions and their slug arguments come from the catalogue, so a new one is covered unasked.
import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import { demoDatabase } from '../helpers/demo.ts';
import type { TestDatabase } from '../helpers/database.ts';

let db: TestDatabase;
test.before(async () => {
  db = await demoDatabase();
});
test.after.always(async () => db?.close());

/** input arguments that name something by slug: p_slug, p_slugs, p_coin, p_exchange, p_scope_coin, p_from, p_to … */
const SLUG_ARGUMENT = '^p_(scope_)?(slug|coin|exchange|wallet|from|to)s?$';
/** two demo slugs of each kind that something is attached to (tickers, liquidations, articles, videos, insights) */
const KINDS = {
  coin: ['bitcoin', 'ethereum'],
  exchange: ['binance', 'okx'],
  wallet: ['ledger-nano-x', 'trust-wallet'],
  article: ['what-is-bitcoin', 'how-ethereum-works'],
} as const;
type Kind = keyof typeof KINDS;
const UNKNOWN = 'no-such-slug';
const UNDO = new Error('undo the call');

const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
/** values for the other arguments without a default; the slug's kind decides the logo kind */
const REQUIRED: Record<string, (kind: Kind) => unknown> = {
  p_kind: (kind) => ({ coin: 'coins', exchange: 'exchanges', wallet: 'wallets', article: 'coins' })[kind],
  p_helpful: () => true,
  p_interval: () => 'monthly',
  p_start: () => daysAgo(90),
  p_date: () => daysAgo(10),
  p_buy_date: () => daysAgo(60),
  p_sell_date: () => daysAgo(10),
  p_amount: () => 1,
  p_currency: () => 'usd',
  p_from: () => 'usd',
  p_to: () => ['usd'],
  // a stream's other selectors (api.stream_coins): none but the slugs
  p_ids: () => null,
  p_symbols: () => null,
};

/** bitcoin → bItCoIn */
const mixedCase = (slug: string) => [...slug].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');

interface SlugArgument {
  signature: string;
  name: string;
  argument: string;
  type: string;
  /** every input argument in order, with its type and whether it has a default */
  inputs: { name: string; type: string; required: boolean }[];
}

test('every api function taking a slug answers a mixed-case slug as the lowercase one', async (t) => {
  const cases = await db.sql<SlugArgument[]>`
    with inputs as (
      select p.oid, a.name, a.type::regtype::text as type,
        row_number() over (partition by p.oid order by a.n) as position
      from pg_proc p
      cross join lateral unnest(p.proargnames, coalesce(p.proallargtypes, p.proargtypes::oid[]), p.proargmodes::text[])
        with ordinality as a (name, type, mode, n)
      where p.pronamespace = 'api'::regnamespace and coalesce(a.mode, 'i') in ('i', 'b')
    )
    select p.oid::regprocedure::text as signature, p.proname as name, s.name as argument, s.type,
      (select json_agg(json_build_object('name', i.name, 'type', i.type, 'required', i.position <= p.pronargs - p.pronargdefaults) order by i.position)
       from inputs i where i.oid = p.oid) as inputs
    from pg_proc p
    join inputs s on s.oid = p.oid
    where s.name ~ ${SLUG_ARGUMENT} and s.type in ('text', 'text[]')
    order by 1, 3`;
  // counted, so that a catalogue query gone wrong cannot pass by testing nothing
  t.true(cases.length >= 62, `only ${cases.length} slug arguments found`);
  for (const expected of ['api.coin_detail', 'api.exchange_detail', 'api.coin_list', 'api.ticker_list', 'api.rsi', 'api.article_list'])
    t.true(cases.some((c) => c.name === expected.slice(4)), `${expected} is covered`);

  // all in one transaction, so that now() is one instant for every call
  await db.sql.begin(async (tx) => {
    const outcome = async (c: SlugArgument, kind: Kind, value: unknown) => {
      const values: unknown[] = [];
      const args = c.inputs.flatMap((input) => {
        let v: unknown;
        if (input.name === c.argument) v = value;
        else if (input.required) {
          const make = REQUIRED[input.name];
          if (!make) throw new Error(`${c.signature}: no value for the required argument ${input.name} (add it to REQUIRED)`);
          v = make(kind);
        } else return [];
        values.push(v);
        return [`${input.name} => $${values.length}::${input.type}`];
      });
      // each call in a savepoint rolled back (article_feedback writes); a failed one rolls back by itself
      let answer: { result: unknown } | { error: { code?: string; message: string } } | undefined;
      try {
        await tx.savepoint(async (sp) => {
          const [row] = await sp.unsafe(`select coalesce(jsonb_agg(to_jsonb(r)), '[]') as result from api.${c.name}(${args.join(', ')}) r`, values as never[]);
          answer = { result: row!.result };
          throw UNDO;
        });
      } catch (error) {
        if (error !== UNDO) {
          // a message may quote the slug as it was given ("Unknown currency: bItCoIn.")
          const { code, message } = error as { code?: string; message: string };
          answer = { error: { code, message: message.toLowerCase() } };
        }
      }
      return answer;
    };

    const differing: string[] = [];
    const undistinguished: string[] = [];
    for (const c of cases) {
      let distinguished = false;
      for (const [kind, [first, second]] of Object.entries(KINDS) as [Kind, readonly [string, string]][]) {
        // a list argument gets the slug and the kind's other one
        const value = (slug: string, other: string) => (c.type === 'text[]' ? [slug, other] : slug);
        const unknown = await outcome(c, kind, value(UNKNOWN, second));
        for (const [slug, other] of [[first, second], [second, first]] as const) {
          const lower = await outcome(c, kind, value(slug, other));
          const mixed = await outcome(c, kind, value(mixedCase(slug), other));
          if (!isDeepStrictEqual(mixed, lower)) differing.push(`${c.signature}, ${c.argument} = ${mixedCase(slug)}: ${JSON.stringify(mixed).slice(0, 200)}`);
          if (!isDeepStrictEqual(lower, unknown)) distinguished = true;
        }
      }
      // else the comparison proves nothing: a slug that is never looked up compares equal too
      if (!distinguished) undistinguished.push(`${c.signature}, ${c.argument}`);
    }
    t.deepEqual(differing, [], 'a mixed-case slug answered differently');
    t.deepEqual(undistinguished, [], 'no demo slug answered differently from an unknown one');
  });
});
