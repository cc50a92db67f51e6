// Alarms group: the key owner's TARGET alarms on coins (create, list, get, update, delete),
// the inventory balance and the instant-trigger guard. Another owner's alarm is 404. Evaluation
// runs in SQL after each price refresh. SQL: sql/functions/620_alarms.sql, 625_alarm_evaluation.sql.
// A notification the service cannot send (email without SMTP_URL, push without a subscribed browser) is refused here, in SQL.
import type { Context } from 'koa';
import { z } from 'zod';
import { pageAnswer } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { defineRoute } from '../http/routes.ts';
import { decimal, envelope, int, pageOf, resource, text, timestamp } from '../http/schemas.ts';
import { query } from '../http/validation.ts';
import type { Config } from '../config.ts';
import type { Sql } from '../db/client.ts';
import { notificationChannels } from '../mail/smtp.ts';
import { slug } from '../validators.ts';

const tag = 'Alarms';
export const METRICS = ['rate', 'volume', 'marketcap'] as const;
export const DIRECTIONS = ['above', 'below'] as const;
export const NOTIFICATIONS = ['email', 'push', 'webhook'] as const;
const STATUSES = ['active', 'triggered'] as const;

// Response shapes: app.alarm_json (sql/functions/620_alarms.sql) and app.alarm_triggered_event (625).
const Alarm = resource('Alarm', z.object({
  id: int(), type: z.literal('TARGET'), name: text(),
  coin: z.object({ slug: text(), symbol: text(), name: text() }),
  metric: z.enum(METRICS), direction: z.enum(DIRECTIONS), target: decimal(), notification: z.enum(NOTIFICATIONS), status: z.enum(STATUSES),
  triggered_value: decimal('The value that triggered it; null while active.').nullable(),
  triggered_at: timestamp().nullable(),
  created_at: timestamp(), updated_at: timestamp(),
}), 'A TARGET alarm of the key owner.');
const balanceMeta = z.object({ balance: int('Alarms left in the owner\'s inventory.') });

/** The body POSTed to a webhook endpoint for an alarm.triggered event (app.webhook_outbox_message). */
export const AlarmTriggeredEvent = resource('AlarmTriggeredEvent', z.object({
  id: z.uuid().describe('The event id: the idempotency key across retries.'),
  type: z.literal('alarm.triggered'),
  created_at: timestamp(),
  test: z.boolean().describe('True for POST /webhooks/{id}/test samples.'),
  data: z.object({
    alarm: Alarm.nullable().describe('The alarm as the API shows it; null in a test event.'),
    coin: z.object({ id: int(), slug: text(), name: text(), symbol: text() }),
    metric: z.enum(METRICS), direction: z.enum(DIRECTIONS), target: decimal(),
    value: decimal('The value that triggered the alarm.'),
    triggered_at: timestamp(),
    message: text('Test events only: says no alarm triggered.').optional(),
  }),
}), 'The body of an alarm.triggered webhook delivery.');

const idParams = z.object({ id: query.int(1, 2_147_483_647).describe('Alarm id.') });

const fields = {
  name: z.string().trim().min(1, 'Must not be empty.').max(255).describe('A label, at most 255 characters.'),
  coin: slug('coin').describe('Slug of the coin, e.g. bitcoin.'),
  metric: z.enum(METRICS).describe('rate: current USD price; volume: 24h USD volume; marketcap: marketcap.'),
  direction: z.enum(DIRECTIONS).describe('above: triggers when the value is at or above target; below: at or below.'),
  // The exact digits are read from the raw body (exactTarget): this only checks the shape.
  target: z
    .union([z.number().positive(), query.decimal()], { error: 'Must be a positive number, as a JSON number or a decimal string.' })
    .describe('The value to reach: a JSON number or a decimal string, kept exactly (responses return it as a decimal string).'),
  notification: z.enum(NOTIFICATIONS).describe(
    'webhook: an alarm.triggered event to your webhook endpoints; email: one e-mail to the address on record for your key (422 email_not_configured ' +
    'when this service sends no e-mail, 422 email_address_missing without an address); push: a notification to every browser the owner subscribed in the developer console (Account, "Notify this browser"; 422 push_not_available without one).'),
};


/**
 * The body's top-level `target` as the client wrote it: a JSON number's source text (through
 * JSON.parse's reviver context, never a float round trip), a string as is. Postgres reads it as numeric.
 */
function exactTarget(ctx: Context, parsed: number | string): string {
  if (typeof parsed === 'string') return parsed;
  const rawBody = (ctx.request as { rawBody?: string }).rawBody ?? '';
  const sources = new Map<unknown, string>();
  const root = JSON.parse(rawBody, function (this: unknown, key: string, value: unknown, context?: { source?: string }) {
    if (key === 'target' && typeof value === 'number' && context?.source) sources.set(this, context.source);
    return value;
  } as (key: string, value: unknown) => unknown);
  return sources.get(root) ?? String(parsed);
}

/** The body of a new alarm: the API's POST /alarms and the console's form. */
export const newAlarmBody = z.object({ ...fields, type: z.literal('TARGET').optional().describe('TARGET, the only type (optional).') });
/** The changes of an alarm: the API's PATCH /alarms/{id} and the console's edit and re-arm forms. */
export const alarmChanges = z
  .object({ ...z.object(fields).partial().shape, status: z.literal('active').optional().describe('active re-arms a triggered alarm.') })
  .refine((changes) => Object.keys(changes).length > 0, 'Give at least one field to change.');

type NewAlarm = Omit<z.infer<typeof newAlarmBody>, 'target' | 'type'> & { target: string };

/** app.create_alarm with the channels this service can send (the API and the console): {alarm, balance}. */
export async function createAlarm(sql: Sql, config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, owner: string, alarm: NewAlarm) {
  const [row] = await sql<{ created: { alarm: { id: number }; balance: number } }[]>`
    select app.create_alarm(${owner}, ${alarm.name}, ${alarm.coin}, ${alarm.metric}, ${alarm.direction},
      ${alarm.target}, ${alarm.notification}, ${notificationChannels(config)}) as created`;
  return row!.created;
}

/** app.update_alarm with the channels this service can send (the API and the console); target as decimal text. */
export async function updateAlarm(sql: Sql, config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, owner: string, id: number | string, changes: Omit<z.infer<typeof alarmChanges>, 'target'> & { target?: string }) {
  const [row] = await sql<{ data: unknown }[]>`
    select app.update_alarm(${owner}, ${id}, ${sql.json(changes)}, ${notificationChannels(config)}) as data`;
  return row!.data;
}

/** app.delete_alarm (the API and the console): {deleted, balance}. */
export async function deleteAlarm(sql: Sql, owner: string, id: number | string) {
  const [row] = await sql<{ result: { deleted: boolean; balance: number } }[]>`select app.delete_alarm(${owner}, ${id}) as result`;
  return row!.result;
}

export const alarmRoutes = [
  defineRoute({
    method: 'get', path: '/alarms', operationId: 'listAlarms', tag, plan: 'free', noStore: true,
    query: z.object({
      page: query.int(1, 1_000_000).optional().default(1),
      per_page: query.int(1, 100).optional().default(25).describe('1-100, default 25.'),
      status: z.enum(STATUSES).optional(),
      direction: z.enum(DIRECTIONS).optional(),
      notification: z.enum(NOTIFICATIONS).optional(),
    }),
    response: pageOf(Alarm, balanceMeta.shape),
    summary: "The key owner's alarms, newest first, filtered by status, direction and notification; meta.balance is the alarm inventory left.",
    handler: async ({ query: q, key, ctx, deps: { sql } }) => {
      const [row] = await sql<{ page: { total: number; balance: number; data: unknown[] } }[]>`
        select app.list_alarms(${key.owner}, ${q.status ?? null}, ${q.direction ?? null}, ${q.notification ?? null},
          ${q.page}, ${q.per_page}) as page`;
      const { total, balance, data } = row!.page;
      return pageAnswer(ctx, q.page, q.per_page, { total, data }, { balance });
    },
  }),
  defineRoute({
    method: 'post', path: '/alarms', operationId: 'createAnAlarm', tag, plan: 'free', noStore: true, status: 201,
    conflict: 'alarm_inventory_exhausted: the owner has no alarm left in its inventory (details.balance).',
    body: newAlarmBody,
    response: envelope(Alarm, balanceMeta),
    summary:
      'Creates an active TARGET alarm on a coin, taking one from the owner\'s alarm inventory (409 alarm_inventory_exhausted at 0). ' +
      '422 alarm_would_trigger when the current value already meets the target, 422 no_current_value when the coin has none for the metric; ' +
      '422 email_not_configured, email_address_missing or push_not_available for a notification this service cannot send.',
    handler: async ({ body, key, ctx, deps: { sql, config } }) => {
      const created = await createAlarm(sql, config, key.owner, { ...body, target: exactTarget(ctx, body.target) });
      return { data: created.alarm, meta: { balance: created.balance } };
    },
  }),
  defineRoute({
    method: 'get', path: '/alarms/{id}', operationId: 'getAnAlarm', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(Alarm),
    summary: 'One alarm of the key owner.',
    handler: async ({ params: { id }, key, ctx, deps: { sql } }) => {
      const [row] = await sql<{ data: unknown }[]>`select app.get_alarm(${key.owner}, ${id}) as data`;
      if (!row?.data) throw ApiError.notFound('alarm');
      return { data: row.data };
    },
  }),
  defineRoute({
    method: 'patch', path: '/alarms/{id}', operationId: 'updateAnAlarm', tag, plan: 'free', noStore: true, params: idParams,
    body: alarmChanges,
    response: envelope(Alarm),
    summary:
      'Changes any of name, coin, metric, direction, target, notification; status "active" re-arms a triggered alarm. ' +
      'The instant-trigger guard re-applies when an active alarm\'s condition changes or it is re-armed; a changed notification gets the checks of create.',
    handler: async ({ params: { id }, body, key, ctx, deps: { sql, config } }) => {
      const changes = { ...body, target: body.target === undefined ? undefined : exactTarget(ctx, body.target) };
      return { data: await updateAlarm(sql, config, key.owner, id, changes) };
    },
  }),
  defineRoute({
    method: 'delete', path: '/alarms/{id}', operationId: 'deleteAnAlarm', tag, plan: 'free', noStore: true, params: idParams,
    response: envelope(z.object({ deleted: z.literal(true) }), balanceMeta),
    summary: 'Deletes an alarm (active or triggered) and returns one to the owner\'s alarm inventory.',
    handler: async ({ params: { id }, key, ctx, deps: { sql } }) => {
      const result = await deleteAlarm(sql, key.owner, id);
      return { data: { deleted: result.deleted }, meta: { balance: result.balance } };
    },
  }),
];
