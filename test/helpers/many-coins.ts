// A catalogue at the size the venues list (thousands of coins), made in SQL in one statement: names,
// symbols and slugs built from syllables, so that searches match many coins at every tier (a shared
// symbol, a common prefix, a substring) as they do in a real catalogue, with ranks by market cap.
import type { Sql } from '../../src/db/client.ts';

const SYLLABLES = ['bit', 'eth', 'sol', 'doge', 'lite', 'chain', 'link', 'swap', 'moon', 'dex', 'meta', 'verse', 'pay', 'fi', 'net', 'star', 'zen', 'nova', 'ai', 'gold'];

/**
 * Adds `count` active coins (slugs `<name>-<n>`, symbols of 3 to 4 letters shared by several coins)
 * with a coin_state each: price 1, market cap falling with n, ranked after the coins already ranked.
 */
export async function manyCoins(sql: Sql, count: number): Promise<void> {
  await sql`insert into market.data_sources (name, kind, description) values ('test-many', 'import', 'test coins (test/helpers/many-coins.ts)')
            on conflict (name) do nothing`;
  await sql`
    with words as (select ${SYLLABLES}::text[] as w, cardinality(${SYLLABLES}::text[]) as k),
    made as (
      select g, w[1 + g % k] as a, w[1 + (g / k) % k] as b, w[1 + (g / (k * k)) % k] as c
      -- numbered on from the coins already there, so that a second call adds others
      from generate_series((select count(*) from market.coins)::int + 1, (select count(*) from market.coins)::int + ${count}) g, words
    ),
    coins as (
      insert into market.coins (slug, symbol, name, type, status, circulating_supply, source)
      select a || b || '-' || c || '-' || g, upper(left(a, 2) || left(b, 1) || case when g % 3 = 0 then left(c, 1) else '' end),
        initcap(a || b) || ' ' || initcap(c), 'token', 'active', 1000000, 'test-many'
      from made
      returning id
    ),
    ranked as (select coalesce(max(rank), 0) as top from market.coin_state)
    insert into market.coin_state (coin_id, price, volume_24h, marketcap, rank, last_updated)
    select id, 1, 1000, 1e12 / (row_number() over (order by id)), (select top from ranked) + row_number() over (order by id), now()
    from coins`;
  await sql`analyze market.coins`;
  await sql`analyze market.coin_state`;
}
