// Every operation of the API run as a client of the reference would run it, and its answers checked:
// the requests (a value for each path parameter, the required query parameters and bodies), the
// check against the service's own OpenAPI response schemas and the check against the reference's
// documented fields and types. Shared by the contract test (test/http/contract.test.ts, the demo
// data), the mixed-case slug test and the bench at size (bench/scale.ts, the venues' whole market).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../src/api/index.ts';
import type { RouteSpec } from '../src/http/routes.ts';
import { departures, referenceOperation } from './reference-contract.ts';

/** An answer as the checks read it. */
export interface ContractResponse { status: number; body: any }

/** What runs the requests: the tests' in-process API or plain fetch against a running service. */
export interface ContractClient {
  get(path: string, key?: string | null): Promise<ContractResponse>;
  request(method: string, path: string, init?: { key?: string | null; headers?: Record<string, string>; body?: string }): Promise<ContractResponse>;
}

/** A client of a running service at `base`. */
export function fetchClient(base: string): ContractClient {
  const request: ContractClient['request'] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers, ...(init.key ? { authorization: `Bearer ${init.key}` } : {}) };
    const response = await fetch(`${base}${path}`, { method, headers, body: init.body });
    const text = await response.text();
    let body: unknown = text;
    try { body = JSON.parse(text); } catch { /* not JSON: kept as text for the failure's message */ }
    return { status: response.status, body };
  };
  return { request, get: (path, key) => request('GET', path, { key }) };
}

/** The key the requests use, and the value each kind of path parameter takes. */
export interface Fixture { key: string; values: Record<string, string> }

/** With a pro `key`: a value of each kind of path parameter from the service's data, and an alarm and a webhook made here. */
export async function contractFixture(client: ContractClient, key: string): Promise<Fixture> {
  const first = async (path: string, field = 'slug') => {
    const response = await client.get(path, key);
    const item = Array.isArray(response.body.data) ? response.body.data[0] : undefined;
    if (!item) throw new Error(`${path} returned nothing to take a ${field} from: ${JSON.stringify(response.body).slice(0, 300)}`);
    return String(item[field]);
  };
  const alarm = await client.request('POST', '/api/v1/alarms', {
    key, headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'BTC far away', coin: 'bitcoin', metric: 'rate', direction: 'above', target: 100000000, notification: 'webhook' }),
  });
  const webhook = await client.request('POST', '/api/v1/webhooks', {
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
      secondWallet: (await client.get('/api/v1/wallets', key)).body.data[1].slug,
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

// Query values where the reference's own example would not find data (the demo history covers the
// last year) or the operation needs a parameter the reference leaves optional.
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

const BODY: Record<string, unknown> = {
  createAnAlarm: { name: 'ETH at one dollar', coin: 'ethereum', metric: 'rate', direction: 'below', target: 1, notification: 'webhook' },
  updateAnAlarm: { target: 200000000 },
  createAWebhookEndpoint: { url: 'https://hooks.example.com/second', events: ['alarm.triggered'] },
  castASentimentVote: { vote: 'bullish' },
  submitArticleFeedback: { helpful: true },
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
  const body = route.body ? JSON.stringify(BODY[route.operationId] ?? {}) : undefined;
  return { method: route.method.toUpperCase(), url: `/api/v1${path}${search}`, body };
}

// Deleting runs last, so the other operations still find the alarm and the webhook.
// Streams (text/event-stream) never end: test/streams/sse.test.ts covers them.
export const contractRoutes = apiRoutes.filter((route) => !route.stream).sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));

/** Every operation once, in contractRoutes' order: its answer by operationId, and how long it took. */
export async function answerAll(client: ContractClient, { key, values }: Fixture) {
  const answers = new Map<string, ContractResponse & { ms: number }>();
  for (const route of contractRoutes) {
    const request = requestFor(route, values);
    const headers: Record<string, string> = request.body === undefined ? {} : { 'content-type': 'application/json' };
    const started = performance.now();
    const response = await client.request(request.method, request.url, { key, headers, body: request.body });
    answers.set(route.operationId, { ...response, ms: performance.now() - started });
  }
  return answers;
}

/** The response schema the service's own OpenAPI `document` gives a route's success. */
export function ownSchema(document: any, route: RouteSpec) {
  return document.paths[`/api/v1${route.path}`]?.[route.method]?.responses?.[String(route.status ?? 200)]?.content?.['application/json']?.schema;
}

/** One answer checked against the service's own document and against the reference. */
export interface AnswerCheck {
  /** a status other than the route's, no schema, or a body the schema refuses */
  problem?: string;
  /** "<operationId> <path>: …" where the body departs from the reference's documented response (the keys of DIFFERENCES) */
  departures: string[];
  /** "<operationId> <path>": null where the reference shows a value (the keys of NULLS) */
  nulls: string[];
  /** whether the reference documents a response to compare with */
  compared: boolean;
}

/** A checker of answers against the service's own OpenAPI `document` (as served) and the reference. */
export function answerChecker(document: any): (route: RouteSpec, response: ContractResponse) => AnswerCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return (route, response) => {
    const schema = ownSchema(document, route);
    let problem: string | undefined;
    if (response.status !== (route.status ?? 200)) problem = `${response.status} ${JSON.stringify(response.body).slice(0, 200)}`;
    else if (!schema) problem = 'no response schema';
    else {
      const validate = ajv.compile(schema);
      if (!validate(response.body)) problem = ajv.errorsText(validate.errors?.slice(0, 5));
    }
    const documented = Object.entries(referenceOperation(route)?.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1].content?.['application/json']?.schema;
    const found = new Set<string>();
    const nulled = new Set<string>();
    if (documented) departures(documented, response.body, 'body', found, nulled);
    return {
      ...(problem ? { problem } : {}),
      departures: [...found].map((departure) => `${route.operationId} ${departure}`),
      nulls: [...nulled].map((path) => `${route.operationId} ${path}`),
      compared: documented !== undefined,
    };
  };
}

/** Every answer of answerAll checked (answerChecker), by operationId. */
export function checkAll(document: any, answers: Map<string, ContractResponse>): Map<string, AnswerCheck> {
  const check = answerChecker(document);
  return new Map(contractRoutes.filter((route) => answers.has(route.operationId)).map((route) => [route.operationId, check(route, answers.get(route.operationId)!)]));
}
