// Webhooks group: the key owner's endpoints (register, list, get, delete, re-enable), a test
// event and the delivery log. Another owner's endpoint is 404. Delivery: jobs/deliver_webhook.ts.
// SQL: sql/functions/600_webhook_events.sql, 605_webhook_endpoints.sql, 610_webhook_delivery.sql.
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { defineRoute } from '../http/routes.ts';
import { envelope, int, pageOf, resource, text, timestamp, url } from '../http/schemas.ts';
import { query } from '../http/validation.ts';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { RESPONSE_EXCERPT_BYTES } from '../webhooks/post.ts';
import { targetProblem } from '../webhooks/target.ts';

/** Endpoints one owner may register. */
export const WEBHOOK_ENDPOINT_LIMIT = 10;
export const WEBHOOK_EVENTS = ['alarm.triggered'] as const;
const tag = 'Webhooks';

const idParams = z.object({ id: query.int(1, 2_147_483_647).describe('Webhook endpoint id.') });

// Response shapes: app.webhook_endpoint_json and app.list_webhook_deliveries (605_webhook_endpoints.sql).
const WebhookEndpoint = resource('WebhookEndpoint', z.object({
  id: int(), url: url(), events: z.array(z.enum(WEBHOOK_EVENTS)),
  status: z.enum(['delivering', 'disabled']),
  consecutive_failures: int('Deliveries failed in a row; the 10th disables the endpoint.'),
  disabled_at: timestamp().nullable(), created_at: timestamp(),
}), 'A webhook endpoint of the key owner (never its secret).');
const WebhookDelivery = resource('WebhookDelivery', z.object({
  id: int(), event: z.enum(WEBHOOK_EVENTS), event_id: z.uuid(), test: z.boolean(),
  status: z.enum(['pending', 'succeeded', 'failed', 'skipped']),
  response_status: int('The last attempt\'s HTTP status; null before an answer.').nullable(),
  error: text().nullable(), attempts: int(), delivered_at: timestamp().nullable(), created_at: timestamp(),
  attempt_log: z.array(z.object({
    started_at: timestamp(), outcome: z.enum(['in_flight', 'succeeded', 'failed', 'interrupted']),
    response_status: int().nullable(), duration_ms: int().nullable(), error: text().nullable(),
    response_excerpt: text(`The start of the receiver's answer (at most ${RESPONSE_EXCERPT_BYTES} bytes, invalid UTF-8 replaced); null without an answer.`).nullable(),
  })),
}), 'One delivery of an event to an endpoint, with every HTTP attempt.');

/** The body of a new endpoint: the API's POST /webhooks and the console's form. */
export const endpointBody = z.object({
  url: z.string().max(2048).describe('Where to POST events: an http(s) URL of a public host (loopback and private-range addresses are refused).'),
  events: z.array(z.enum(WEBHOOK_EVENTS)).min(1).max(WEBHOOK_EVENTS.length).describe('Event kinds to receive: alarm.triggered.'),
});

/**
 * Registers an endpoint of `owner` (the API's create and the console's): the URL checked against
 * the private-target rules first (a 422 ApiError on url), then app.create_webhook_endpoint. Returns
 * the endpoint with its secret.
 */
export async function createWebhookEndpoint(sql: Sql, config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'>, owner: string, body: z.infer<typeof endpointBody>) {
  const problem = await targetProblem(body.url, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  if (problem) throw ApiError.validation({ url: [problem] });
  const [row] = await sql<{ data: { id: number; url: string; secret: string } }[]>`
    select app.create_webhook_endpoint(${owner}, ${body.url}, ${body.events}::text[], ${WEBHOOK_ENDPOINT_LIMIT}) as data`;
  return row!.data;
}

export const webhookRoutes = [
  defineRoute({
    method: 'get', path: '/webhooks', operationId: 'listWebhookEndpoints', tag, plan: 'free', noStore: true,
    response: envelope(z.array(WebhookEndpoint), z.object({ limit: int('Endpoints one owner may register.') })),
    summary: "The key owner's webhook endpoints: id, url, events, status (delivering | disabled), consecutive_failures, disabled_at, created_at.",
    handler: async ({ key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown[] }[]>`select app.list_webhook_endpoints(${key.owner}) as data`;
      return { data: row!.data, meta: { limit: WEBHOOK_ENDPOINT_LIMIT } };
    },
  }),
  defineRoute({
    method: 'post', path: '/webhooks', operationId: 'createAWebhookEndpoint', tag, plan: 'free', noStore: true, status: 201,
    conflict: 'conflict: the owner already has the maximum number of webhook endpoints.',
    body: endpointBody,
    response: envelope(WebhookEndpoint.extend({ secret: text('The signing secret, shown this once only.') }), z.object({ note: text() })),
    summary: `Registers a webhook endpoint (at most ${WEBHOOK_ENDPOINT_LIMIT} per owner). The response carries the signing secret, shown this once only.`,
    handler: async ({ body, key, deps: { sql, config } }) => ({
      data: await createWebhookEndpoint(sql, config, key.owner, body), meta: { note: 'Store the secret now: it is not shown again.' },
    }),
  }),
  defineRoute({
    method: 'get', path: '/webhooks/{id}', operationId: 'getAWebhookEndpoint', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(WebhookEndpoint),
    summary: 'One webhook endpoint of the key owner (never its secret).',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.get_webhook_endpoint(${key.owner}, ${id}) as data`;
      if (!row?.data) throw ApiError.notFound('webhook endpoint');
      return { data: row.data };
    },
  }),
  defineRoute({
    method: 'delete', path: '/webhooks/{id}', operationId: 'deleteAWebhookEndpoint', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(z.object({ deleted: z.literal(true) })),
    summary: 'Deletes a webhook endpoint with its delivery log; nothing more is sent to it.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.delete_webhook_endpoint(${key.owner}, ${id}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'post', path: '/webhooks/{id}/enable', operationId: 'enableAWebhookEndpoint', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(WebhookEndpoint),
    summary: 'Re-enables an endpoint disabled after 10 consecutive failed deliveries: status delivering, consecutive_failures 0. Events raised while it was disabled are not sent.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.enable_webhook_endpoint(${key.owner}, ${id}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'post', path: '/webhooks/{id}/test', operationId: 'sendATestEvent', tag, plan: 'free', noStore: true, params: idParams,
    conflict: 'conflict: the endpoint is disabled; re-enable it first.',
    response: envelope(z.object({ queued: z.literal(true), event_id: z.uuid(), delivery_id: int() })),
    summary: 'Queues a sample alarm.triggered event marked "test": true to this endpoint, signed and retried like any other; 409 when the endpoint is disabled.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.send_webhook_test(${key.owner}, ${id}) as data`;
      return { data: row!.data };
    },
  }),
  defineRoute({
    method: 'get', path: '/webhooks/{id}/deliveries', operationId: 'webhookDeliveryLog', tag, plan: 'free', noStore: true, params: idParams,
    query: z.object({ page: paginationQuery.page, per_page: query.int(1, 100).optional().default(25).describe('1-100, default 25.') }),
    response: pageOf(WebhookDelivery, { retention: text() }),
    summary: "The endpoint's deliveries still kept (for meta.retention), newest first: status, response_status, error, attempts, delivered_at, and every attempt (outcome, status, duration, error).",
    handler: async ({ params: { id }, query: q, key, ctx, deps: { sql } }) => {
      const [row] = await sql<{ page: { total: number; data: unknown[]; retention: string } }[]>`
        select app.list_webhook_deliveries(${key.owner}, ${id}, ${q.page}, ${q.per_page}) as page`;
      return pageAnswer(ctx, q.page, q.per_page, row!.page, { retention: row!.page.retention });
    },
  }),
];
