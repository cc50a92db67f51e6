// Live streams (issue 35): the live index prices of the selected coins as Server-Sent Events.
// The selectors and convert are those of GET /prices; the stream opens only once the key, its
// plan (STREAM_PLANS), its concurrent streams (STREAM_CONNECTIONS) and the selectors are accepted.
// SQL: sql/functions/960_live_prices.sql; fan-out: src/http/streams.ts.
import { z } from 'zod';
import { defineRoute, type PlanName } from '../http/routes.ts';
import { ApiError } from '../http/errors.ts';
import { admissionDecision, presentedBearer } from '../http/admission.ts';
import { openStream, priceEvent, Subscriber, type LiveRow } from '../http/streams.ts';
import { PLANS_BY_SCOPE } from '../plans.ts';
import { capSelectors, listOrNull, selectorFields } from './coins.ts';
import { convert } from './prices.ts';

const MINUTE_MS = 60_000;

/** The lowest of the plans allowed to stream: the one a key needs at least. */
const streamPlan = (plans: readonly string[] | undefined): PlanName =>
  PLANS_BY_SCOPE['data-api'].find((plan) => (plans ?? ['starter', 'pro']).includes(plan)) ?? 'starter';

export const streamRoutes = [
  defineRoute({
    method: 'get', path: '/stream/prices', operationId: 'streamPrices', tag: 'Prices', noStore: true, reads: 'primary',
    plan: (_query, config) => streamPlan(config?.STREAM_PLANS),
    query: z
      .object({ ...selectorFields, convert })
      .superRefine(capSelectors)
      .superRefine((value, ctx) => {
        if (!value.ids?.length && !value.slugs?.length && !value.symbols?.length) {
          ctx.addIssue({ code: 'custom', path: ['ids'], message: 'Pass at least one selector: ids, slugs or symbols.' });
        }
      }),
    summary: 'The live index prices of the selected coins (ids, slugs or symbols, optionally in a fiat currency) as Server-Sent Events, within a second of the venues.',
    stream: {
      contentType: 'text/event-stream',
      description:
        'Server-Sent Events. First `snapshot` (data: {data: [{id, slug, symbol, price, currency, at}], meta: {currency, count}}), ' +
        'then one `price` event per change of a selected coin\'s live index price (at most one a second per coin), each with an `id:` line: ' +
        'reconnect with `Last-Event-ID` to receive the changes missed instead of the snapshot. A `:` comment line every 15 s keeps the connection open. ' +
        'The stream ends with an `end` event saying why (slow_consumer: the client did not read; revoked; quota_exceeded). ' +
        'Plans: Starter and Pro by default (STREAM_PLANS); concurrent streams per key by plan (STREAM_CONNECTIONS, default Starter 2, Pro 10). ' +
        'Quota: opening a stream counts one request, and each further minute it stays open one more (one request per connection-minute). ' +
        'Prices are decimal strings, live index prices in USD converted with the latest rate; REST prices stay minute-based.',
    },
    handler: async ({ query: q, key, deps, ctx }) => {
      const hub = deps.streams;
      if (!hub) throw new ApiError(503, 'service_unavailable', 'Live streams are not served by this process.');
      const coins = (await deps.sql<{ coin_id: number }[]>`
        select coin_id from api.stream_coins(${listOrNull(q.ids)}::int[], ${listOrNull(q.slugs)}::text[], ${listOrNull(q.symbols)}::text[], ${q.convert})`).map((row) => row.coin_id);
      const limit = hub.limitFor(key.plan);
      if (hub.openFor(key.id) >= limit) {
        throw new ApiError(429, 'too_many_streams', `At most ${limit} concurrent streams per key on the ${key.plan} plan.`, { limit });
      }
      const presented = presentedBearer(ctx.get('authorization'))!;
      const lastEventId = /^\d{1,18}$/.exec(ctx.get('last-event-id') ?? '')?.[0];
      const subscriber = new Subscriber(hub, { keyId: key.id, keyHex: presented.digest.hex, coins, currency: q.convert, res: ctx.res });
      // registered before the snapshot is read: nothing that changes meanwhile is missed
      hub.add(subscriber);
      let rows: LiveRow[];
      try {
        rows = [...await deps.sql<LiveRow[]>`
          select * from market.live_prices_since(${lastEventId ?? 0}, ${[q.convert]}::text[]) where id = any (${coins}::int[])`];
      } catch (error) {
        subscriber.close();
        throw error;
      }
      openStream(ctx);
      const newest = rows.reduce((max, row) => Math.max(max, Number(row.version)), Number(lastEventId ?? 0));
      if (lastEventId) {
        for (const row of rows) subscriber.write(priceEvent(row));
      } else {
        const data = rows.map(({ version: _version, ...row }) => row);
        subscriber.write(`${newest ? `id: ${newest}\n` : ''}event: snapshot\ndata: ${JSON.stringify({ data, meta: { currency: q.convert, count: data.length } })}\n\n`);
      }
      subscriber.opened(newest);
      // each further minute open is admitted as one request (quota, plan and key checked again)
      const endpoint = 'GET /api/v1/stream/prices';
      const plan = streamPlan(deps.config.STREAM_PLANS);
      subscriber.every(MINUTE_MS, () => {
        void Promise.resolve(admissionDecision(ctx, deps, presented, { endpoint, plan, consume: true })).then(
          (row) => {
            if (row.outcome !== 'ok') subscriber.end(row.outcome === 'auth_rate_limited' || row.outcome === 'per_page_exceeded' ? 'unauthorized' : row.outcome);
          },
          () => {},
        );
      });
    },
  }),
];
