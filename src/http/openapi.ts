// OpenAPI 3.1 generated from the registered routes' zod schemas, so it cannot drift from them.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { RouteSpec } from './routes.ts';
import { resources } from './schemas.ts';

/**
 * The version of the published contract this service implements (the reference's info.version);
 * the service's own release travels beside it as x-service-version.
 */
export const CONTRACT_VERSION = '1.0.0';

/**
 * One recorded answer per operation, refreshed by `make openapi-examples` (the contract test,
 * test/http/contract.test.ts, records them and checks each still matches its schema).
 */
const EXAMPLES_FILE = new URL('./openapi-examples.json', import.meta.url);
let examples: Record<string, unknown> | undefined;
const recordedExample = (operationId: string) =>
  (examples ??= JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as Record<string, unknown>)[operationId];

/** A zod schema as JSON Schema 2020-12, without `$schema` (it is embedded in another document). */
export const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

// Every response to a request with a valid key carries the quota headers; the per-minute ones
// (X-RateLimit-*, the "minute" items of RateLimit) only when the request was counted.
const LIMIT_HEADERS = {
  'X-Quota-Limit': 'Monthly request quota of the key’s plan.',
  'X-Quota-Used': 'Requests counted this month (UTC).',
  'X-Quota-Remaining': 'Requests left this month.',
  'X-Quota-Reset': 'When the quota resets: Unix epoch seconds of the next first of the month, 00:00 UTC.',
  'X-RateLimit-Limit': 'Requests allowed per minute.',
  'X-RateLimit-Remaining': 'Requests left in the current minute.',
  'X-RateLimit-Reset': 'Seconds until the current minute ends.',
  'RateLimit-Policy': 'IETF draft-ietf-httpapi-ratelimit-headers (structured fields): "minute";q=<per minute>;w=60, "month";q=<monthly quota>.',
  'RateLimit': 'IETF draft-ietf-httpapi-ratelimit-headers: "minute";r=<remaining>;t=<seconds>, "month";r=<remaining>;t=<seconds to reset>.',
};
const limitHeaders = Object.fromEntries(Object.keys(LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const headerComponents = Object.fromEntries(
  Object.entries(LIMIT_HEADERS).map(([name, description]) => [
    name,
    { description, schema: name.startsWith('X-') ? { type: 'integer', minimum: 0 } : { type: 'string' } },
  ]),
);

const errorResponse = (description: string) => ({
  description,
  headers: limitHeaders,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function parameters(schema: z.ZodType | undefined, location: 'query' | 'path') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as {
    properties?: Record<string, Record<string, unknown>>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    schema: property,
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
  }));
}

/**
 * The JSON Schema of a route's success body: its operation's 2xx schema in the OpenAPI document, and
 * the outputSchema of the MCP tool the route answers (src/mcp/tools.ts).
 */
export const responseSchema = (route: RouteSpec) => (route.response ? jsonSchema(route.response, 'output') : undefined);

function successResponse(route: RouteSpec) {
  if (route.stream) {
    return { description: route.stream.description, headers: limitHeaders, content: { [route.stream.contentType]: { schema: { type: 'string' } } } };
  }
  const example = recordedExample(route.operationId);
  return {
    description: 'Success: {data, meta} (meta at least {}); paginated lists add links (absolute URLs) and the page counts in meta.',
    headers: limitHeaders,
    ...(route.response
      ? { content: { 'application/json': { schema: responseSchema(route), ...(example === undefined ? {} : { example }) } } }
      : {}),
  };
}

// The body of an alarm.triggered delivery (sql/functions/610_webhook_delivery.sql) and its headers
// (src/webhooks/post.ts): documented as the webhook-creation callback and as a top-level webhook.
const alarmTriggeredDelivery = (operationId: string) => ({
  operationId,
  summary: 'alarm.triggered: one of the key owner’s webhook alarms crossed its target.',
  description: 'Verify X-Service-Signature (t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the endpoint secret>) before trusting the body; the event id is the idempotency key across retries.',
  parameters: [
    ['X-Service-Event', 'The event type, alarm.triggered.'],
    ['X-Service-Event-Id', 'The event id (uuid), the same on every retry.'],
    ['X-Service-Delivery-Attempt', 'The attempt number, from 1.'],
    ['X-Service-Signature', 't=<unix seconds>,v1=<hex>.'],
  ].map(([name, description]) => ({ name, in: 'header', required: true, description, schema: { type: 'string' } })),
  requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/AlarmTriggeredEvent' } } } },
  responses: { '2XX': { description: 'Received; any other answer, or none within the timeout, is retried with back-off.' } },
});

/**
 * Text as CommonMark shows it: descriptions in OpenAPI are Markdown, where `<t>` is an HTML tag
 * (Redoc drops it), so angle brackets outside code spans are escaped and render as written.
 */
export const markdownText = (text: string) =>
  text.split(/(`[^`]*`)/).map((part, index) => (index % 2 ? part : part.replace(/[<>]/g, '\\$&'))).join('');

// Values that are data, not document text: a recorded example may well hold a `description` field.
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** Every `description` of the document through markdownText, one place for all of them. */
function markdownDescriptions<T>(node: T): T {
  if (Array.isArray(node)) return node.map(markdownDescriptions) as T;
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [
    key,
    DATA_KEYWORDS.has(key) ? value : key === 'description' && typeof value === 'string' ? markdownText(value) : markdownDescriptions(value),
  ])) as T;
}

export function openApiDocument(routes: RouteSpec[], version: string, base = '') {
  return markdownDescriptions(openApiSource(routes, version, base));
}

function openApiSource(routes: RouteSpec[], version: string, base: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const plan = typeof route.plan === 'string' ? route.plan : route.stream ? 'starter (STREAM_PLANS)' : 'depends on parameters';
    (paths[`/api/v1${route.path}`] ??= {})[route.method] = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      description: `Minimum plan: ${plan}${route.window ? `; ${route.window.described}` : ''}.`,
      'x-minimum-plan': plan,
      ...(route.deprecated ? { deprecated: true, 'x-sunset': route.deprecated.sunset } : {}),
      // an empty requirement: no key needed (a key that is sent is still checked)
      ...(route.public ? { security: [] } : {}),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }
        : {}),
      ...(route.operationId === 'createAWebhookEndpoint' ? { callbacks: { 'alarm.triggered': { '{$request.body#/url}': { post: alarmTriggeredDelivery('alarmTriggeredCallback') } } } } : {}),
      // Every status the service can answer this operation with, each with the error envelope.
      responses: {
        [String(route.status ?? 200)]: successResponse(route),
        400: errorResponse(
          route.body
            ? 'invalid_json (the body is not JSON), invalid_body (it is not a JSON object) or bad_request (the request could not be parsed).'
            : 'bad_request: the request could not be parsed.',
        ),
        401: errorResponse('Missing, malformed, unknown or revoked key.'),
        403: errorResponse('plan_required: the endpoint or window needs a higher plan.'),
        404: errorResponse('not_found: the resource does not exist.'),
        ...(route.conflict ? { 409: errorResponse(route.conflict) } : {}),
        ...(route.body ? { 413: errorResponse('payload_too_large: the body is over the size limit.') } : {}),
        422: errorResponse('validation: details.errors maps each field to its messages.'),
        429: errorResponse('rate_limited or quota_exceeded; see Retry-After.'),
        431: errorResponse('headers_too_large: the request headers are too large.'),
        500: errorResponse('server_error.'),
        503: errorResponse('service_unavailable (the database is unreachable or restarting) or timeout; see Retry-After.'),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'market-data-api',
      version: CONTRACT_VERSION,
      'x-service-version': version,
      description: `Crypto market data over HTTP: coins, prices, markets, exchanges, wallets, the global market, sentiment, indicators, liquidations, conversion, calculators, editorial content, alarms and webhooks. Prices, supplies and rates are decimal strings. The JSON Schema of every resource: ${base}/api/v1/schemas.json; this document for people: ${base}/docs/api.`,
      termsOfService: `${base}/terms`,
      contact: { name: 'market-data-api operators', url: `${base}/status` },
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: base || '/' }],
    security: [{ bearer: [] }],
    paths,
    webhooks: { 'alarm.triggered': { post: alarmTriggeredDelivery('alarmTriggered') } },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      headers: headerComponents,
      schemas: {
        ...resourceSchemas('#/components/schemas/'),
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'details'],
              properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
            },
          },
        },
      },
    },
  };
}

/** The named resources (src/http/schemas.ts `resource`) as JSON Schemas, referring to each other under `prefix`. */
export function resourceSchemas(prefix: string): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(resources, { io: 'output', unrepresentable: 'any', uri: (id) => `${prefix}${id}` });
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _dialect, $id: _uri, id: _id, ...schema }]) => [id, schema]));
}

/** The JSON Schema bundle of the resources (GET /api/v1/schemas.json). */
export function schemaBundle(base: string) {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `${base}/api/v1/schemas.json`,
    title: 'market-data-api resources',
    $defs: resourceSchemas('#/$defs/'),
  };
}
