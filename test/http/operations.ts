// Requests for every operation over the demo data `make start` serves: the value each path
// parameter takes, the required query parameters and bodies. Shared by the contract test and the
// mixed-case slug test, which both run every operation.
import type { RouteSpec } from '../../src/http/routes.ts';
import type { TestApi } from '../helpers/http.ts';

import { referenceOperation } from '../../dev/reference-contract.ts';

export { departures, reference, referenceOperation, type ReferenceSchema } from '../../dev/reference-contract.ts';

/** What the demo data has: the values path parameters and required query parameters take. */
export interface Fixture { key: string; values: Record<string, string> }

/** A pro key of `owner` and a value of each kind of path parameter, from the demo data (and an alarm and a webhook made here). */
export async function loadFixture(api: TestApi, owner: string): Promise<Fixture> {
  const key = await api.key({ plan: 'pro', owner });
  const first = async (path: string, field = 'slug') => {
    const response = await api.get(path, key);
    const item = Array.isArray(response.body.data) ? response.body.data[0] : undefined;
    if (!item) throw new Error(`${path} returned nothing to take a ${field} from: ${JSON.stringify(response.body).slice(0, 300)}`);
    return String(item[field]);
  };
  const alarm = await api.request('POST', '/api/v1/alarms', {
    key, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'BTC far away', coin: 'bitcoin', metric: 'rate', direction: 'above', target: 100000000, notification: 'webhook' }),
  });
  const webhook = await api.request('POST', '/api/v1/webhooks', {
    key, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.example.com/contract', events: ['alarm.triggered'] }),
  });
  if (alarm.status !== 201 || webhook.status !== 201) throw new Error(`fixtures: alarm ${alarm.status} ${JSON.stringify(alarm.body)}, webhook ${webhook.status} ${JSON.stringify(webhook.body)}`);
  return {
    key,
    values: {
      coin: 'bitcoin',
      exchange: await first('/api/v1/exchanges'),
      wallet: await first('/api/v1/wallets'),
      secondWallet: (await api.get('/api/v1/wallets', key)).body.data[1].slug,
      article: await first('/api/v1/articles'),
      pair: await first('/api/v1/pairs', 'id'),
      video: await first('/api/v1/coins/bitcoin/videos', 'id'),
      insight: await first('/api/v1/insights', 'id'),
      alarm: String(alarm.body.data.id),
      webhook: String(webhook.body.data.id),
    },
  };
}

/** The value of a path parameter: which resource it names follows from the path. */
export function pathValue(route: RouteSpec, name: string, values: Record<string, string>): string {
  if (name === 'metric') return 'marketcap';
  const group = route.path.split('/')[1]!;
  const kinds: Record<string, string> = {
    coins: 'coin', prices: 'coin', exchanges: 'exchange', wallets: 'wallet', articles: 'article', pairs: 'pair',
    videos: 'video', insights: 'insight', alarms: 'alarm', webhooks: 'webhook',
  };
  const value = values[kinds[group] ?? ''];
  if (value === undefined) throw new Error(`no value for {${name}} of ${route.path}`);
  return value;
}

// Query values where the reference's own example would not find demo data (the demo history
// covers the last year) or the operation needs a parameter the reference leaves optional.
export const QUERY: Record<string, Record<string, string>> = {
  historicalPrice: { slug: 'bitcoin', date: new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10) },
  dCACalculator: { start: new Date(Date.now() - 120 * 86_400_000).toISOString().slice(0, 10) },
  profitLossCalculator: {
    buy_date: new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10),
    sell_date: new Date(Date.now() - 20 * 86_400_000).toISOString().slice(0, 10),
  },
  getPrices: { slugs: 'bitcoin,ethereum,tether' },
  convertBetweenAssets: { from: 'bitcoin', to: 'ethereum', amount: '2' },
};

export function requestFor(route: RouteSpec, values: Record<string, string>) {
  const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(pathValue(route, name, values)));
  const query = new URLSearchParams();
  for (const parameter of referenceOperation(route)?.parameters ?? []) {
    if (parameter.in === 'query' && parameter.required && parameter.example !== undefined) query.set(parameter.name, String(parameter.example));
  }
  if (route.operationId === 'compareWallets') query.set('slugs', `${values.wallet},${values.secondWallet}`);
  for (const [name, value] of Object.entries(QUERY[route.operationId] ?? {})) query.set(name, value);
  const search = query.size ? `?${query}` : '';
  let body: string | undefined;
  if (route.body) {
    body = JSON.stringify(BODY[route.operationId] ?? {});
  }
  return { method: route.method.toUpperCase(), url: `/api/v1${path}${search}`, body };
}

const BODY: Record<string, unknown> = {
  createAnAlarm: { name: 'ETH at one dollar', coin: 'ethereum', metric: 'rate', direction: 'below', target: 1, notification: 'webhook' },
  updateAnAlarm: { target: 200000000 },
  createAWebhookEndpoint: { url: 'https://hooks.example.com/second', events: ['alarm.triggered'] },
  castASentimentVote: { vote: 'bullish' },
  submitArticleFeedback: { helpful: true },
};
