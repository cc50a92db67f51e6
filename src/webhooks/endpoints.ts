// The webhook-endpoint core: what an endpoint and a delivery are (their zod schemas) and the
// operations on one owner's endpoints (register, list, get, delete, re-enable, a test event, the
// delivery log), each one SQL function call. The API group (src/api/webhooks.ts) and the developer
// console (src/console/webhooks.ts) both call these. Another owner's endpoint is not found.
// SQL: sql/functions/600_webhook_events.sql, 605_webhook_endpoints.sql, 610_webhook_delivery.sql.
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { ApiError } from '../http/errors.ts';
import { int, resource, text, timestamp, url } from '../http/schemas.ts';
import { RESPONSE_EXCERPT_BYTES } from './post.ts';
import { targetProblem } from './target.ts';

/** Endpoints one owner may register. */
export const WEBHOOK_ENDPOINT_LIMIT = 10;
export const WEBHOOK_EVENTS = ['alarm.triggered'] as const;

// Response shapes: app.webhook_endpoint_json and app.list_webhook_deliveries (605_webhook_endpoints.sql).
export const WebhookEndpoint = resource('WebhookEndpoint', z.object({
  id: int(), url: url(), events: z.array(z.enum(WEBHOOK_EVENTS)),
  status: z.enum(['delivering', 'disabled']),
  consecutive_failures: int('Deliveries failed in a row; the 10th disables the endpoint.'),
  disabled_at: timestamp().nullable(), created_at: timestamp(),
}), 'A webhook endpoint of the key owner (never its secret).');
export const WebhookDelivery = resource('WebhookDelivery', z.object({
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
 * Registers an endpoint of `owner`: the URL checked against the private-target rules first (a 422
 * ApiError on url), then app.create_webhook_endpoint. Returns the endpoint with its secret.
 */
export async function createWebhookEndpoint(sql: Sql, config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'>, owner: string, body: z.infer<typeof endpointBody>) {
  const problem = await targetProblem(body.url, config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
  if (problem) throw ApiError.validation({ url: [problem] });
  const [row] = await sql<{ data: { id: number; url: string; secret: string } }[]>`
    select app.create_webhook_endpoint(${owner}, ${body.url}, ${body.events}::text[], ${WEBHOOK_ENDPOINT_LIMIT}) as data`;
  return row!.data;
}

/** app.list_webhook_endpoints: the owner's endpoints, never their secrets. */
export async function listWebhookEndpoints<T = unknown>(sql: Sql, owner: string): Promise<T[]> {
  const [row] = await sql<{ data: T[] }[]>`select app.list_webhook_endpoints(${owner}) as data`;
  return row!.data;
}

/** app.get_webhook_endpoint: the owner's endpoint, or null (none, or another owner's). */
export async function getWebhookEndpoint<T = unknown>(sql: Sql, owner: string, id: number | string): Promise<T | null> {
  const [row] = await sql<{ data: T | null }[]>`select app.get_webhook_endpoint(${owner}, ${id}) as data`;
  return row?.data ?? null;
}

/** app.delete_webhook_endpoint: the endpoint goes with its delivery log. */
export async function deleteWebhookEndpoint(sql: Sql, owner: string, id: number | string) {
  const [row] = await sql<{ data: unknown }[]>`select app.delete_webhook_endpoint(${owner}, ${id}) as data`;
  return row!.data;
}

/** app.enable_webhook_endpoint: delivering again, its failure count back to 0. */
export async function enableWebhookEndpoint(sql: Sql, owner: string, id: number | string) {
  const [row] = await sql<{ data: unknown }[]>`select app.enable_webhook_endpoint(${owner}, ${id}) as data`;
  return row!.data;
}

/** app.send_webhook_test: a sample alarm.triggered event marked test, queued to this endpoint. */
export async function sendWebhookTest(sql: Sql, owner: string, id: number | string) {
  const [row] = await sql<{ data: unknown }[]>`select app.send_webhook_test(${owner}, ${id}) as data`;
  return row!.data;
}

/** app.list_webhook_deliveries: one page of the endpoint's deliveries, newest first, with the total and how long they are kept. */
export async function listWebhookDeliveries<T = unknown>(sql: Sql, owner: string, id: number | string, page: number, perPage: number) {
  const [row] = await sql<{ page: { total: number; retention: string; data: T[] } }[]>`
    select app.list_webhook_deliveries(${owner}, ${id}, ${page}, ${perPage}) as page`;
  return row!.page;
}
