// The contract: every operation, run against the app over the demo data `make start` serves, must
// (a) answer 2xx with a body that validates against this service's own OpenAPI response schema, and
// (b) carry the fields and JSON types the published reference contract documents
// (test/fixtures/reference-openapi.json), but for the reviewed differences in dev/contract-differences.ts.
// With UPDATE_OPENAPI_EXAMPLES=1 (make openapi-examples) it records the answers as the document's examples.
import { readFileSync, writeFileSync } from 'node:fs';
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../../src/api/index.ts';
import { demoDatabase } from '../helpers/demo.ts';
import { useApi } from '../helpers/http.ts';
import { DIFFERENCES, NULLS } from '../../dev/contract-differences.ts';
import { answerAll, checkAll, contractFixture, contractRoutes, type Fixture } from '../../dev/contract-run.ts';
import { reference } from '../../dev/reference-contract.ts';

const EXAMPLES_FILE = new URL('../../src/http/openapi-examples.json', import.meta.url);
let fixture: Promise<Fixture> | undefined;
const handles = useApi(test, { env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }, database: demoDatabase });

// CONTRACT_TAGS=Coins,Prices reports only those groups (all operations still run).
const TAGS = process.env.CONTRACT_TAGS?.split(',');
const reported = (items: string[]) =>
  items.filter((item) => !TAGS || TAGS.includes(apiRoutes.find((route) => route.operationId === item.split(/[ :]/)[0])?.tag ?? '')).sort();

const loadFixture = async () => contractFixture(handles.api, await handles.api.key({ plan: 'pro', owner: 'contract' }));
let answers: ReturnType<typeof answerAll> | undefined;
const answered = async () => answerAll(handles.api, await (fixture ??= loadFixture()));

/**
 * Arrays cut to their first items: an example shows the shape, not the whole list. The documents that
 * describe the API (openapi.json, schemas.json) keep one entry of each large map (paths, schemas).
 */
const DOCUMENTS = ['openAPISpec', 'resourceSchemas'];
const LARGE_MAP = 10;
const trimmed = (value: unknown, depth = 0, document = false): unknown => {
  if (Array.isArray(value)) return value.slice(0, depth === 1 ? 2 : 3).map((item) => trimmed(item, depth + 1, document));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    const kept = document && depth > 0 && entries.length > LARGE_MAP ? entries.slice(0, 1) : entries;
    return Object.fromEntries(kept.map(([name, item]) => [name, trimmed(item, depth + 1, document)]));
  }
  return value;
};

test.serial('every operation answers 2xx with a body its own OpenAPI response schema accepts', async (t) => {
  const results = await (answers ??= answered());
  const document = (await handles.api.get('/api/v1/openapi.json')).body;
  const checks = checkAll(document, results);
  const examples: Record<string, unknown> = {};
  for (const route of contractRoutes) {
    if (!checks.get(route.operationId)!.problem) examples[route.operationId] = trimmed(results.get(route.operationId)!.body, 0, DOCUMENTS.includes(route.operationId));
  }
  t.deepEqual(reported([...checks].filter(([, check]) => check.problem).map(([operation, check]) => `${operation}: ${check.problem}`)), []);
  if (process.env.UPDATE_OPENAPI_EXAMPLES) writeFileSync(EXAMPLES_FILE, `${JSON.stringify(examples, null, 1)}\n`);
});

test.serial('every operation of the reference carries the reference’s fields and JSON types, but for the reviewed differences', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json')).body;
  const checks = [...checkAll(document, await (answers ??= answered())).values()];
  const compared = checks.filter((check) => check.compared).length;
  const found = checks.flatMap((check) => check.departures);
  const nulls = checks.flatMap((check) => check.nulls);
  t.true(compared >= 55, `${compared} operations with a documented response compared`);
  t.deepEqual(reported([...new Set(found)]), reported(Object.keys(DIFFERENCES)));
  // Which fields are null depends on the data (a coin without supply, a venue without history):
  // each null seen must be one the service documents, not every documented one seen.
  t.deepEqual(reported([...new Set(nulls)].filter((field) => !(field in NULLS))), [], 'nulls where the reference shows a value, not in NULLS');
});

// In recording mode the document in memory still has the old examples.
(process.env.UPDATE_OPENAPI_EXAMPLES ? test.skip : test.serial)('every operation has a recorded example, and each still matches its schema', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const stale: string[] = [];
  for (const route of apiRoutes.filter((candidate) => !candidate.stream)) {
    const content = document.paths[`/api/v1${route.path}`][route.method].responses[String(route.status ?? 200)].content?.['application/json'];
    if (content?.example === undefined) stale.push(`${route.operationId}: no example`);
    else if (!ajv.validate(content.schema, content.example)) stale.push(`${route.operationId}: ${ajv.errorsText()}`);
  }
  t.deepEqual(reported(stale), [], 'make openapi-examples records them afresh');
});

/** An error the reference shows: its operation, status, code, message and details, word for word. */
interface ReferenceError { operation: string; status: number; code: string; message: string; details?: Record<string, unknown> }

/** Every error example of the reference OpenAPI: each operation's non-2xx response example. */
function referenceErrors(): ReferenceError[] {
  const errors: ReferenceError[] = [];
  for (const operations of Object.values(reference.paths) as Record<string, { operationId: string; responses?: Record<string, any> }>[]) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const example = response.content?.['application/json']?.schema?.example?.error;
        if (status.startsWith('2') || !example) continue;
        errors.push({ operation: operation.operationId, status: Number(status), code: example.code, message: example.message, details: example.details });
      }
    }
  }
  return errors;
}

/** The error table of reference-endpoints.md ("Error envelope examples"): one row per operation it names. */
function referenceErrorTable(): string[] {
  const text = readFileSync(new URL('../fixtures/reference-endpoints.md', import.meta.url), 'utf8');
  const table = text.split('### Error envelope examples')[1]!.split('\n\n')[1]!;
  return table.split('\n').slice(2).flatMap((line) => {
    const [status, code, message, , operations] = line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, ''));
    return [...operations!.matchAll(/`(\w+)`/g)].map(([, operation]) => `${operation} ${status} ${code!.replaceAll('`', '')} ${message}`);
  });
}

/**
 * The request that makes the service answer each example: an unknown slug or id for a not_found,
 * the coin without data (an awaiting one: no price, no candles, no rank) for "no data" answers, a
 * free key on the window the message names, what the 422's details name.
 */
const UNKNOWN = 'dogecoinx';
type ErrorRequest = (values: Fixture['values'] & { noData: string }) => { path: string; plan?: 'free' | 'pro' };
const ERROR_REQUESTS: Record<string, ErrorRequest> = {
  'listCoins 422': () => ({ path: '/coins?per_page=251' }),
  'getPrices 422': () => ({ path: '/prices' }),
  'getCoinDetail 404': () => ({ path: `/coins/${UNKNOWN}` }),
  'candleHistory 404': () => ({ path: `/coins/${UNKNOWN}/history` }),
  'getACoinPrice 404': () => ({ path: `/prices/${UNKNOWN}` }),
  'getPairDetail 404': () => ({ path: '/pairs/999999999' }),
  'getExchangeDetail 404': () => ({ path: `/exchanges/${UNKNOWN}` }),
  'getExchangeTrustScore 404': () => ({ path: `/exchanges/${UNKNOWN}/trust-score` }),
  'getWalletDetail 404': () => ({ path: `/wallets/${UNKNOWN}` }),
  'fearGreedIndex 404': ({ noData }) => ({ path: `/sentiment/fear-greed?coin=${noData}` }),
  'indicatorSnapshot 404': ({ noData }) => ({ path: `/coins/${noData}/indicators` }),
  'rSIRelativeStrengthIndex 403': ({ coin }) => ({ path: `/coins/${coin}/indicators/rsi?period=28`, plan: 'free' }),
  'volumeVolatility 403': ({ coin }) => ({ path: `/coins/${coin}/indicators/volume-volatility?period=30`, plan: 'free' }),
  'convertBetweenAssets 404': () => ({ path: `/convert?from=${UNKNOWN}&to=usd` }),
};

/** Examples no request to this service can bring back, and why. */
const UNPRODUCIBLE: Record<string, string> = {
  'stochasticRSI 403':
    'the specification puts stoch-rsi itself on Pro: a key short of the 28-day window’s Starter is short of Pro too, and is told the plan that unlocks it, "This endpoint requires the Pro plan or higher." (required_plan pro)',
  'priceVolatility 403':
    'the specification puts price-volatility itself on Pro: a key short of the 30-day window’s Starter is short of Pro too, and is told the plan that unlocks it, "This endpoint requires the Pro plan or higher." (required_plan pro)',
};

test.serial('every error message of the reference comes back word for word for the request that causes it', async (t) => {
  const errors = referenceErrors();
  t.true(errors.length >= 16, `${errors.length} error examples in the reference`);
  // the error table of reference-endpoints.md is the same list as the OpenAPI examples
  t.deepEqual(referenceErrorTable().sort(), errors.map((error) => `${error.operation} ${error.status} ${error.code} ${error.message}`).sort());
  const examples = errors.map((error) => `${error.operation} ${error.status}`);
  t.deepEqual([...Object.keys(ERROR_REQUESTS), ...Object.keys(UNPRODUCIBLE)].sort(), [...examples].sort(), 'each example has a request or the reason it has none');

  const { key: pro, values } = await (fixture ??= loadFixture());
  const free = await handles.api.key({ plan: 'free', owner: 'contract-free' });
  const noData = (await handles.api.get('/api/v1/coins?status=awaiting', pro)).body.data[0].slug as string;
  const wrong: string[] = [];
  for (const error of errors) {
    const made = ERROR_REQUESTS[`${error.operation} ${error.status}`]?.({ ...values, noData });
    if (!made) continue;
    const response = await handles.api.get(`/api/v1${made.path}`, made.plan === 'free' ? free : pro);
    const answered = { status: response.status, code: response.body.error?.code, message: response.body.error?.message };
    // the example's details, each field as shown (the service may name more)
    const details = Object.fromEntries(Object.entries(error.details ?? {}).map(([name, value]) => [name,
      name === 'errors' ? Object.fromEntries(Object.keys(value as object).map((field) => [field, response.body.error?.details?.errors?.[field]])) : response.body.error?.details?.[name]]));
    const expected = { status: error.status, code: error.code, message: error.message, details: error.details ?? {} };
    if (JSON.stringify({ ...answered, details }) !== JSON.stringify(expected)) {
      wrong.push(`${error.operation} GET ${made.path}: ${JSON.stringify(response.body.error)} where the reference shows ${JSON.stringify(expected)}`);
    }
  }
  t.deepEqual(wrong, []);
});
