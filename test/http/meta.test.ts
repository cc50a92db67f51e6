// Meta group: ping, and an OpenAPI document generated from the registered routes.
import { readFileSync } from 'node:fs';
import test from 'ava';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { apiRoutes } from '../../src/api/index.ts';
import { VERSION } from '../../src/version.ts';
import { CONTRACT_VERSION } from '../../src/http/openapi.ts';
import { useApi } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';

const handles = useApi(test, { routes: fixtureRoutes });

test.serial('ping answers with the key’s plan and labels demo data', async (t) => {
  const key = await handles.api.key({ plan: 'pro' });
  const response = await handles.api.get('/api/v1/ping', key);
  t.is(response.status, 200);
  t.is(response.body.data.status, 'ok');
  t.is(response.body.data.plan, 'pro');
  const demo = await handles.db.sql`select name from market.source_health where demo and serving order by name`;
  t.true(demo.length > 0, 'the template carries the placeholder FX rates');
  t.is(response.body.meta.demo_data, demo.length > 0);
  t.deepEqual(response.body.meta.demo_sources.map((source: { name: string }) => source.name), demo.map((row) => row.name));
});

test.serial('a demo source that never ran is not served; the placeholder FX rates stop being served once a real FX source succeeded', async (t) => {
  const key = await handles.api.key();
  const names = async () => (await handles.api.get('/api/v1/ping', key)).body.meta.demo_sources.map((source: { name: string }) => source.name);
  t.false((await names()).includes('simulated-liquidations'));
  t.true((await names()).includes('fx-seed'));
  await handles.db.sql`select market.record_source_run('ecb')`;
  t.false((await names()).includes('fx-seed'));
  await handles.db.sql`update market.data_sources set last_run_at = null, last_success_at = null where name = 'ecb'`;
});

test.serial('ping says so when no demo data is served', async (t) => {
  await handles.db.sql`update market.data_sources set demo = false`;
  const response = await handles.api.get('/api/v1/ping', await handles.api.key());
  t.false(response.body.meta.demo_data);
  t.deepEqual(response.body.meta.demo_sources, []);
  await handles.db.sql`update market.data_sources set demo = true where name in ('simulated', 'fx-seed')`;
});

test('openapi.json lists every registered route with its parameters', async (t) => {
  const key = await handles.api.key();
  const response = await handles.api.get('/api/v1/openapi.json', key);
  t.is(response.status, 200);
  const document = response.body;
  t.is(document.openapi, '3.1.0');
  for (const route of fixtureRoutes) {
    const operation = document.paths[`/api/v1${route.path}`]?.[route.method];
    t.truthy(operation, `${route.method} ${route.path}`);
    t.is(operation.operationId, route.operationId);
  }
  const items = document.paths['/api/v1/fixtures/items/{id}'].get;
  const names = items.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`);
  t.deepEqual(names.sort(), ['path:id', 'query:kind', 'query:limit', 'query:page', 'query:per_page']);
  const kind = items.parameters.find((parameter: { name: string }) => parameter.name === 'kind');
  t.deepEqual(kind.schema.enum, ['a', 'b']);
  t.truthy(document.paths['/api/v1/fixtures/echo'].post.requestBody);
  t.is(document.paths['/api/v1/fixtures/pro'].get['x-minimum-plan'], 'pro');
});

test.serial('openapi.json is public: no key needed, none counted; a key sent is still checked', async (t) => {
  const anonymous = await handles.api.get('/api/v1/openapi.json', null);
  t.is(anonymous.status, 200);
  t.is(anonymous.body.openapi, '3.1.0');
  t.false('meta' in anonymous.body, 'the document itself, not an envelope');
  t.deepEqual(anonymous.body.paths['/api/v1/openapi.json'].get.security, [], 'documented as needing no key');
  t.is(anonymous.body.paths['/api/v1/ping'].get.security, undefined, 'other operations keep the global bearer requirement');
  const key = await handles.api.key();
  const keyed = await handles.api.get('/api/v1/openapi.json', key);
  t.is(keyed.status, 200);
  t.is(keyed.headers.get('x-quota-used'), '0', 'not counted against the quota');
  t.is((await handles.api.get('/api/v1/ping', key)).headers.get('x-quota-used'), '1');
  const bad = await handles.api.get('/api/v1/openapi.json', 'mda_not_a_real_key');
  t.is(bad.status, 401);
});

test('openapi.json: contract and service versions, contact, licence, terms; bounds as keywords; the alarm.triggered callback and webhook', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json', null)).body;
  t.is(document.info.version, CONTRACT_VERSION);
  t.is(document.info['x-service-version'], VERSION);
  t.is(document.info.license.identifier, 'MIT');
  t.regex(document.info.termsOfService, /^http:\/\/127\.0\.0\.1:\d+\/terms$/);
  t.regex(document.info.contact.url, /\/status$/);
  t.is((await handles.api.get(new URL(document.info.termsOfService).pathname, null)).status, 200, 'the terms are served');
  const coins = document.paths['/api/v1/coins'].get.parameters;
  const parameter = (name: string) => coins.find((p: { name: string }) => p.name === name).schema;
  t.like(parameter('page'), { type: 'integer', minimum: 1 });
  t.like(parameter('per_page'), { type: 'integer', minimum: 1, maximum: 250 });
  const callback = document.paths['/api/v1/webhooks'].post.callbacks['alarm.triggered']['{$request.body#/url}'].post;
  t.is(callback.requestBody.content['application/json'].schema.$ref, '#/components/schemas/AlarmTriggeredEvent');
  t.deepEqual(callback.parameters.map((p: { name: string }) => p.name), ['X-Service-Event', 'X-Service-Event-Id', 'X-Service-Delivery-Attempt', 'X-Service-Signature']);
  t.deepEqual({ ...document.webhooks['alarm.triggered'].post, operationId: callback.operationId }, callback);
  t.truthy(document.components.schemas.AlarmTriggeredEvent, 'the event schema is a named resource');
});

test('openapi.json is a valid OpenAPI 3.1 document: Redocly’s structural rules and every $ref resolved', async (t) => {
  const document = (await handles.api.get('/api/v1/openapi.json', null)).body;
  const config = await createConfig({ extends: ['minimal'], rules: { struct: 'error', 'no-unresolved-refs': 'error', 'operation-operationId-unique': 'error', 'path-parameters-defined': 'error' } });
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: `${handles.api.base}/api/v1/openapi.json`, config });
  t.deepEqual(problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`), []);
});

test('schemas.json: the JSON Schema bundle of the resources, public, each compiling and referring only inside the bundle', async (t) => {
  const response = await handles.api.get('/api/v1/schemas.json', null);
  t.is(response.status, 200);
  const bundle = response.body;
  t.is(bundle.$schema, 'https://json-schema.org/draft/2020-12/schema');
  t.regex(bundle.$id, /^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/schemas\.json$/);
  const names = Object.keys(bundle.$defs);
  t.true(names.includes('AlarmTriggeredEvent'));
  const ajv = new Ajv2020({ strict: false });
  addFormats.default(ajv);
  ajv.addSchema(bundle);
  for (const name of names) t.truthy(ajv.getSchema(`${bundle.$id}#/$defs/${name}`), name);
  const refs = JSON.stringify(bundle).match(/"\$ref":"[^"]*"/g) ?? [];
  t.true(refs.every((ref) => ref.startsWith('"$ref":"#/$defs/')), 'refs stay inside the bundle');
  const openapi = (await handles.api.get('/api/v1/openapi.json', null)).body;
  t.deepEqual(Object.keys(openapi.components.schemas).filter((name) => name !== 'Error').sort(), names.sort(), 'the document embeds the same resources');
});

test('openapi.json lists every status an operation can answer, each with the error envelope', async (t) => {
  const response = await handles.api.get('/api/v1/openapi.json', await handles.api.key());
  const conflicting = ['createAnAlarm', 'createAWebhookEndpoint', 'sendATestEvent'];
  for (const route of fixtureRoutes) {
    const operation = response.body.paths[`/api/v1${route.path}`][route.method];
    const expected = ['400', '401', '403', '404', '422', '429', '431', '500', '503'];
    if (route.body) expected.push('413');
    if (conflicting.includes(route.operationId)) expected.push('409');
    const errors = Object.keys(operation.responses).filter((status) => Number(status) >= 400);
    t.deepEqual(errors.sort(), expected.sort(), route.operationId);
    for (const status of errors) {
      t.is(operation.responses[status].content['application/json'].schema.$ref, '#/components/schemas/Error', `${route.operationId} ${status}`);
    }
  }
  t.true(conflicting.every((operationId) => fixtureRoutes.some((route) => route.operationId === operationId && route.conflict)));
});

test('the service’s own routes are the meta group and whatever groups have landed', (t) => {
  const paths = apiRoutes.map((route) => route.path);
  t.true(['/ping', '/usage', '/openapi.json'].every((path) => paths.includes(path)));
  t.is(new Set(apiRoutes.map((route) => route.operationId)).size, apiRoutes.length, 'operationIds are unique');
});

test('every operation of the published reference contract is served, under its operationId', (t) => {
  // method, path and operationId of each operation of the reference OpenAPI (../shared/spec/reference-openapi.json)
  const reference = JSON.parse(readFileSync(new URL('../fixtures/reference-operations.json', import.meta.url), 'utf8')) as
    { method: string; path: string; operationId: string }[];
  t.is(reference.length, 85);
  const served = new Map(apiRoutes.map((route) => [`${route.method} ${route.path}`, route.operationId]));
  const missing = reference.filter((op) => served.get(`${op.method} ${op.path}`) !== op.operationId);
  t.deepEqual(missing, []);
});
