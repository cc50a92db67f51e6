// OpenAPI 3.1 generated from the registered routes' zod schemas, so it cannot drift from them.
import { z } from 'zod';
import type { RouteSpec } from './routes.ts';

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
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
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

export function openApiDocument(routes: RouteSpec[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const plan = typeof route.plan === 'string' ? route.plan : 'depends on parameters';
    (paths[`/api/v1${route.path}`] ??= {})[route.method] = {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      description: `Minimum plan: ${plan}.`,
      'x-minimum-plan': plan,
      ...(route.deprecated ? { deprecated: true, 'x-sunset': route.deprecated.sunset } : {}),
      // an empty requirement: no key needed (a key that is sent is still checked)
      ...(route.public ? { security: [] } : {}),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: z.toJSONSchema(route.body, { io: 'input', unrepresentable: 'any' }) } } } }
        : {}),
      // Every status the service can answer this operation with, each with the error envelope.
      responses: {
        [String(route.status ?? 200)]: { description: 'Success: {data, meta} (meta at least {}); paginated lists add links, absolute URLs.', headers: limitHeaders },
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
    info: { title: 'market-data-api', version },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      headers: headerComponents,
      schemas: {
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
