// Text PostgreSQL cannot take — U+0000, invalid UTF-8, unpaired surrogates — in any input of any
// operation is a 422 naming the field, never a 500 (issue 11, item 2). Driven by the OpenAPI
// document generated from the route declarations, so a new route or parameter is covered at once.
import test from 'ava';
import { apiRoutes } from '../../src/api/index.ts';
import { openApiDocument } from '../../src/http/openapi.ts';
import { useApi, type TestResponse } from '../helpers/http.ts';

let key: string;
const handles = useApi(test, {
  setup: async ({ api }) => {
    key = await api.key({ plan: 'pro' });
  },
});

const NUL = 'Must not contain the NUL character (U+0000).';
const UTF8 = 'Must be valid UTF-8 text.';
const SURROGATE = 'Must not contain unpaired UTF-16 surrogates.';

/** Percent-encoded values as they appear in a URL, and the message each must produce. */
const URL_VALUES: [string, string][] = [
  ['%00', NUL],
  ['a%00b', NUL],
  ['%FF', UTF8],
  ['a%C3%28', UTF8],
  ['%ED%A0%80', UTF8], // a surrogate encoded in UTF-8 is not UTF-8
];

interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: 'query' | 'path' }[];
  body?: { properties: Record<string, JsonSchema> };
}
interface JsonSchema {
  type?: string;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
}

const document = openApiDocument(apiRoutes, 'test') as unknown as { paths: Record<string, Record<string, Operation & { requestBody?: any }>> };
const operations: Operation[] = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({
    method: method.toUpperCase(),
    path,
    parameters: operation.parameters,
    body: operation.requestBody?.content['application/json'].schema,
  })),
);

const acceptsString = (schema: JsonSchema): boolean => schema.type === 'string' || (schema.anyOf ?? []).some(acceptsString);

/** A URL for the operation: the given raw (encoded) values, every other path parameter a harmless 1. */
function url(operation: Operation, raw: Record<string, string>) {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => raw[name] ?? '1');
  const query = operation.parameters.filter((parameter) => parameter.in === 'query' && raw[parameter.name] !== undefined);
  return query.length ? `${path}?${query.map((parameter) => `${parameter.name}=${raw[parameter.name]}`).join('&')}` : path;
}

/** Runs the requests `limit` at a time. */
async function inBatches<T>(jobs: (() => Promise<T>)[], limit = 8): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < jobs.length; i += limit) results.push(...(await Promise.all(jobs.slice(i, i + limit).map((job) => job()))));
  return results;
}

function fieldError(response: TestResponse, field: string, message: string) {
  return response.status === 422 && response.body?.error?.code === 'validation' && response.body.error.details.errors?.[field]?.includes(message);
}

test('the document has operations, parameters and body fields to drive this test', (t) => {
  t.is(operations.length, apiRoutes.length);
  t.true(operations.flatMap((operation) => operation.parameters).length > 300);
  t.true(operations.filter((operation) => operation.body).length >= 5);
});

test('every query and path parameter of every operation refuses NUL and invalid UTF-8 with a 422 naming it', async (t) => {
  const jobs = operations.flatMap((operation) =>
    operation.parameters.flatMap((parameter) =>
      URL_VALUES.map(([value, message]) => async () => {
        const target = url(operation, { [parameter.name]: value });
        const response = await handles.api.request(operation.method, target, { key });
        return fieldError(response, parameter.name, message) ? null : `${operation.method} ${target}: ${response.status} ${JSON.stringify(response.body)}`;
      }),
    ),
  );
  const failures = (await inBatches(jobs)).filter(Boolean);
  t.deepEqual(failures, [], `${failures.length} of ${jobs.length} requests`);
});

test('every string field of every body refuses NUL and unpaired surrogates with a 422 naming it', async (t) => {
  const bad: [string, string][] = [
    ['"a\\u0000b"', NUL],
    ['"\\ud800"', SURROGATE],
    ['"x\\udfffy"', SURROGATE],
  ];
  const jobs = operations
    .filter((operation) => operation.body)
    .flatMap((operation) =>
      Object.entries(operation.body!.properties).flatMap(([field, schema]) => {
        // A string, or an array of strings (its first item is named field.0).
        const [shape, named] = acceptsString(schema) ? [(json: string) => json, field] : schema.items && acceptsString(schema.items) ? [(json: string) => `[${json}]`, `${field}.0`] : [];
        if (!shape) return [];
        return bad.map(([json, message]) => async () => {
          const target = url(operation, {});
          const response = await handles.api.request(operation.method, target, {
            key, headers: { 'content-type': 'application/json' }, body: `{"${field}": ${shape(json)}}`,
          });
          return fieldError(response, named!, message) ? null : `${operation.method} ${target} ${field}=${json}: ${response.status} ${JSON.stringify(response.body)}`;
        });
      }),
    );
  t.true(jobs.length >= 30);
  const failures = (await inBatches(jobs)).filter(Boolean);
  t.deepEqual(failures, [], `${failures.length} of ${jobs.length} requests`);
});

test('bad text deep inside a body, and in its keys, is named by its path', async (t) => {
  const response = await handles.api.request('POST', '/api/v1/alarms', {
    key,
    headers: { 'content-type': 'application/json' },
    body: '{"name": "ok", "extra": {"list": [1, {"deep": "\\u0000"}, "\\udbff"]}, "k\\u0000": 1}',
  });
  t.is(response.status, 422);
  const errors = response.body.error.details.errors;
  t.deepEqual(errors['extra.list.1.deep'], [NUL]);
  t.deepEqual(errors['extra.list.2'], [SURROGATE]);
  t.deepEqual(errors['k\u0000'], [NUL]);
});

test('a query parameter name with bad text, or several bad values, are all named', async (t) => {
  // a key of its own: the other tests of this file use theirs concurrently
  const own = await handles.api.key({ plan: 'pro', owner: 'encoding-quota' });
  const response = await handles.api.get('/api/v1/coins?search=%FF&x%00=1&ids=%00', own);
  t.is(response.status, 422);
  const errors = response.body.error.details.errors;
  t.deepEqual(errors.search, [UTF8]);
  t.deepEqual(errors['x\u0000'], [NUL]);
  t.true(errors.ids.includes(NUL));
  t.is(response.headers.get('x-quota-used'), '0', 'refused input costs nothing');
});

test('valid non-ASCII text, a literal percent sign and an encoded surrogate pair still pass', async (t) => {
  for (const search of ['%C3%A9t%C3%A9', '100%', '%F0%9F%98%80', 'a+b']) {
    const response = await handles.api.get(`/api/v1/coins?search=${search}`, key);
    t.is(response.status, 200, search);
  }
  const emoji = await handles.api.request('POST', '/api/v1/alarms', {
    key, headers: { 'content-type': 'application/json' }, body: '{"name": "\\ud83d\\ude00 \u00e9", "coin": "no-such-coin", "metric": "rate", "direction": "above", "target": 1, "notification": "email"}',
  });
  t.not(emoji.status, 500);
  t.is(emoji.body.error.details.errors?.name, undefined, 'a surrogate pair is not an unpaired surrogate');
});

test('an undecodable path that matches no route is a 404 envelope, not a 500', async (t) => {
  for (const path of ['/api/v1/%FF', '/api/v1/coins/%C3%28/nothing', '/api/v1/%00']) {
    const response = await handles.api.get(path, key);
    t.is(response.status, 404, path);
    t.is(response.body.error.code, 'not_found');
  }
});
