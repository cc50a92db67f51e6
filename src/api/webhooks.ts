// Webhooks group: the routes of the key owner's endpoints (register, list, get, delete, re-enable),
// a test event and the delivery log. The schemas and operations are the webhook-endpoint core
// (src/webhooks/endpoints.ts); delivery: jobs/deliver_webhook.ts.
import { z } from 'zod';
import { pageAnswer, paginationQuery } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { defineRoute } from '../http/routes.ts';
import { envelope, int, pageOf, text } from '../http/schemas.ts';
import { query } from '../http/validation.ts';
import {
  createWebhookEndpoint, deleteWebhookEndpoint, enableWebhookEndpoint, endpointBody, getWebhookEndpoint, listWebhookDeliveries,
  listWebhookEndpoints, sendWebhookTest, WEBHOOK_ENDPOINT_LIMIT, WebhookDelivery, WebhookEndpoint,
} from '../webhooks/endpoints.ts';

const tag = 'Webhooks';

const idParams = z.object({ id: query.int(1, 2_147_483_647).describe('Webhook endpoint id.') });

export const webhookRoutes = [
  defineRoute({
    method: 'get', path: '/webhooks', operationId: 'listWebhookEndpoints', tag, plan: 'free', noStore: true,
    response: envelope(z.array(WebhookEndpoint), z.object({ limit: int('Endpoints one owner may register.') })),
    summary: "The key owner's webhook endpoints: id, url, events, status (delivering | disabled), consecutive_failures, disabled_at, created_at.",
    handler: async ({ key, deps: { sql } }) => {
      return { data: await listWebhookEndpoints(sql, key.owner), meta: { limit: WEBHOOK_ENDPOINT_LIMIT } };
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
      const data = await getWebhookEndpoint(sql, key.owner, id);
      if (!data) throw ApiError.notFound('webhook endpoint');
      return { data };
    },
  }),
  defineRoute({
    method: 'delete', path: '/webhooks/{id}', operationId: 'deleteAWebhookEndpoint', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(z.object({ deleted: z.literal(true) })),
    summary: 'Deletes a webhook endpoint with its delivery log; nothing more is sent to it.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      return { data: await deleteWebhookEndpoint(sql, key.owner, id) };
    },
  }),
  defineRoute({
    method: 'post', path: '/webhooks/{id}/enable', operationId: 'enableAWebhookEndpoint', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(WebhookEndpoint),
    summary: 'Re-enables an endpoint disabled after 10 consecutive failed deliveries: status delivering, consecutive_failures 0. Events raised while it was disabled are not sent.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      return { data: await enableWebhookEndpoint(sql, key.owner, id) };
    },
  }),
  defineRoute({
    method: 'post', path: '/webhooks/{id}/test', operationId: 'sendATestEvent', tag, plan: 'free', noStore: true, params: idParams,
    conflict: 'conflict: the endpoint is disabled; re-enable it first.',
    response: envelope(z.object({ queued: z.literal(true), event_id: z.uuid(), delivery_id: int() })),
    summary: 'Queues a sample alarm.triggered event marked "test": true to this endpoint, signed and retried like any other; 409 when the endpoint is disabled.',
    handler: async ({ params: { id }, key, deps: { sql } }) => {
      return { data: await sendWebhookTest(sql, key.owner, id) };
    },
  }),
  defineRoute({
    method: 'get', path: '/webhooks/{id}/deliveries', operationId: 'webhookDeliveryLog', tag, plan: 'free', noStore: true, params: idParams,
    query: z.object({ page: paginationQuery.page, per_page: query.int(1, 100).optional().default(25).describe('1-100, default 25.') }),
    response: pageOf(WebhookDelivery, { retention: text() }),
    summary: "The endpoint's deliveries still kept (for meta.retention), newest first: status, response_status, error, attempts, delivered_at, and every attempt (outcome, status, duration, error).",
    handler: async ({ params: { id }, query: q, key, ctx, deps: { sql } }) => {
      const page = await listWebhookDeliveries(sql, key.owner, id, q.page, q.per_page);
      return pageAnswer(ctx, q.page, q.per_page, page, { retention: page.retention });
    },
  }),
];
