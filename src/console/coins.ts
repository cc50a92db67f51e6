// The suggestions of the console's coin fields (GET /console/coins?q=…): the alarm form's and the
// widget builder's coin fields ask as one types (assets/coin-search.js). They are the first rows of
// GET /api/v1/coins?search= (market.coin_search), at most 10, as JSON, for a signed-in account and
// at most CONSOLE_COIN_SEARCHES_PER_MINUTE a minute. The fields themselves: coinField in ./html.ts.
import type { Context } from 'koa';
import { z } from 'zod';
import type { Account, Kit, PageGroup } from './kit.ts';

/** What a field may search for: the coin list's own bound on `search`. */
const typed = z.string().trim().max(100);

export const coinSearchPages: PageGroup = (routes, kit) => {
  routes.signedIn.get('/coins', (ctx, who) => suggestions(kit, ctx, who));
};

async function suggestions({ sql, config }: Kit, ctx: Context, who: Account) {
  ctx.set('Cache-Control', 'no-store');
  const query = typed.safeParse(typeof ctx.query.q === 'string' ? ctx.query.q : '');
  if (!query.success) {
    ctx.status = 422;
    ctx.body = { error: { message: 'Type at most 100 characters.' } };
    return;
  }
  if (query.data === '') {
    ctx.body = { data: [] };
    return;
  }
  const [row] = await sql<{ data: { slug: string; name: string; symbol: string }[] | null }[]>`
    select app.console_coin_suggestions(${who.owner}, ${query.data}, ${config.CONSOLE_COIN_SEARCHES_PER_MINUTE}) as data`;
  if (row!.data === null) {
    ctx.status = 429;
    ctx.set('Retry-After', '60');
    ctx.body = { error: { message: 'Too many searches; wait a minute and try again.' } };
    return;
  }
  ctx.body = { data: row!.data };
}
