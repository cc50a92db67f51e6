// Price alarms around the current prices, created through the API as a customer would: the
// alarm checks of `make chaos` and `make topology` then wait for the market to cross some of them.
import type { Sql } from '../../src/db/client.ts';

export interface CreatedAlarm {
  id: number;
  coin: string;
  direction: string;
  offset: number;
}

export interface AlarmSet {
  created: CreatedAlarm[];
  /** refused by the instant-trigger guard (the price moved past the target since it was read) */
  refused: number;
  /** any other answer, one line each */
  unexpected: string[];
  /** the slugs of every priced active coin */
  slugs: string[];
}

type Answer = { status: number; json: any };

/**
 * Alarms above and below the current price of `coins` coins (default 6), from 0.02 % to 0.5 % away.
 * `post` sends POST /alarms; `retry` (default: none) wraps each statement and POST, so that a run
 * whose database may be away can wait for it. Draws from `random` in a fixed order (a seed repeats it).
 */
export async function createAlarms(
  sql: Sql,
  options: {
    post: (body: Record<string, unknown>) => Promise<Answer>;
    random: () => number;
    name: string;
    coins?: number;
    retry?: <T>(what: string, work: () => Promise<T>) => Promise<T>;
  },
): Promise<AlarmSet> {
  const { post, random, name } = options;
  const retry = options.retry ?? (<T>(_what: string, work: () => Promise<T>) => work());
  const coins = await sql<{ slug: string }[]>`
    select c.slug from market.coin_state s join market.coins c on c.id = s.coin_id
    where s.price is not null and c.status = 'active' order by c.id`;
  const slugs = coins.map((coin) => coin.slug);
  const shuffled = [...slugs];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
  }
  const offsets = [0.0002, 0.0005, 0.001, 0.002, 0.005];
  const created: CreatedAlarm[] = [];
  const unexpected: string[] = [];
  let refused = 0;
  for (const slug of shuffled.slice(0, options.coins ?? 6)) {
    for (const offset of offsets) {
      for (const direction of ['above', 'below'] as const) {
        // The target as exact decimal text, eight significant digits, from the stored price.
        const [row] = await retry('read a price', () => sql<{ target: string }[]>`
          select round(s.price * ${direction === 'above' ? 1 + offset : 1 - offset}::numeric,
                       greatest(2, 8 - floor(log(s.price))::int))::text as target
          from market.coin_state s join market.coins c on c.id = s.coin_id where c.slug = ${slug}`);
        const body = {
          name: `${name} ${slug} ${direction} ${(offset * 100).toFixed(2)}%`,
          coin: slug,
          metric: 'rate',
          direction,
          target: row!.target,
          notification: random() < 0.8 ? 'webhook' : 'email',
        };
        const response = await retry('create an alarm', async () => {
          const answer = await post(body);
          if (answer.status >= 500 && options.retry) throw new Error(`${answer.status}`);
          return answer;
        });
        if (response.status === 201) created.push({ id: response.json.data.id, coin: slug, direction, offset });
        // the price moved past the target since it was read: the guard refuses, as documented
        else if (response.status === 422 && JSON.stringify(response.json).includes('alarm_would_trigger')) refused++;
        else unexpected.push(`creating alarm ${JSON.stringify(body)}: ${response.status} ${JSON.stringify(response.json)}`);
      }
    }
  }
  return { created, refused, unexpected, slugs };
}
