// The alarm core: what a TARGET alarm is (its zod schemas, the alarm.triggered event) and the
// operations on one owner's alarms, each one SQL function call. The API group (src/api/alarms.ts)
// and the developer console (src/console/alarms.ts) both call these, so they share the validation,
// the inventory and the instant-trigger guard. Another owner's alarm is not found. A notification the
// service cannot send (email without SMTP_URL, push without a subscribed browser) is refused in SQL.
// SQL: sql/functions/620_alarms.sql, 625_alarm_evaluation.sql. The words of an alarm: src/alarm-wording.ts.
import { z } from 'zod';
import { emailConfigured, type Config } from './config.ts';
import type { Sql } from './db/client.ts';
import { decimal, int, resource, text, timestamp } from './http/schemas.ts';
import { query } from './http/validation.ts';
import { slug } from './validators.ts';

export const METRICS = ['rate', 'volume', 'marketcap'] as const;
export const DIRECTIONS = ['above', 'below'] as const;
export const NOTIFICATIONS = ['email', 'push', 'webhook'] as const;
export const STATUSES = ['active', 'triggered'] as const;

// Response shapes: app.alarm_json (sql/functions/620_alarms.sql) and app.alarm_triggered_event (625).
export const Alarm = resource('Alarm', z.object({
  id: int(), type: z.literal('TARGET'), name: text(),
  coin: z.object({ slug: text(), symbol: text(), name: text() }),
  metric: z.enum(METRICS), direction: z.enum(DIRECTIONS), target: decimal(), notification: z.enum(NOTIFICATIONS), status: z.enum(STATUSES),
  triggered_value: decimal('The value that triggered it; null while active.').nullable(),
  triggered_at: timestamp().nullable(),
  created_at: timestamp(), updated_at: timestamp(),
}), 'A TARGET alarm of the key owner.');

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

const fields = {
  name: z.string().trim().min(1, 'Must not be empty.').max(255).describe('A label, at most 255 characters.'),
  coin: slug('coin').describe('Slug of the coin, e.g. bitcoin.'),
  metric: z.enum(METRICS).describe('rate: current USD price; volume: 24h USD volume; marketcap: marketcap.'),
  direction: z.enum(DIRECTIONS).describe('above: triggers when the value is at or above target; below: at or below.'),
  // The API reads the exact digits from the raw body (src/api/alarms.ts): this only checks the shape.
  target: z
    .union([z.number().positive(), query.decimal()], { error: 'Must be a positive number, as a JSON number or a decimal string.' })
    .describe('The value to reach: a JSON number or a decimal string, kept exactly (responses return it as a decimal string).'),
  notification: z.enum(NOTIFICATIONS).describe(
    'webhook: an alarm.triggered event to your webhook endpoints; email: one e-mail to the address on record for your key (422 email_not_configured ' +
    'when this service sends no e-mail, 422 email_address_missing without an address); push: a notification to every browser the owner subscribed in the developer console (Account, "Notify this browser"; 422 push_not_available without one).'),
};

/** The body of a new alarm: the API's POST /alarms and the console's form. */
export const newAlarmBody = z.object({ ...fields, type: z.literal('TARGET').optional().describe('TARGET, the only type (optional).') });
/** The changes of an alarm: the API's PATCH /alarms/{id} and the console's edit and re-arm forms. */
export const alarmChanges = z
  .object({ ...z.object(fields).partial().shape, status: z.literal('active').optional().describe('active re-arms a triggered alarm.') })
  .refine((changes) => Object.keys(changes).length > 0, 'Give at least one field to change.');

type NewAlarm = Omit<z.infer<typeof newAlarmBody>, 'target' | 'type'> & { target: string };

/**
 * The notification channels an alarm may use on this service (app.check_alarm_notification): push
 * where the console is, in which browsers subscribe (the owner must have one, checked in SQL).
 */
export const notificationChannels = (config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>) =>
  ['webhook', ...(emailConfigured(config) ? ['email'] : []), ...(config.CONSOLE === 'off' ? [] : ['push'])];

/** What app.list_alarms filters on, and its page. */
export interface AlarmFilter {
  status?: (typeof STATUSES)[number] | undefined;
  direction?: (typeof DIRECTIONS)[number] | undefined;
  notification?: (typeof NOTIFICATIONS)[number] | undefined;
  page: number;
  per_page: number;
}

/** app.list_alarms: one page of the owner's alarms, newest first, with the total and the inventory balance. */
export async function listAlarms(sql: Sql, owner: string, filter: AlarmFilter) {
  const [row] = await sql<{ page: { total: number; balance: number; data: unknown[] } }[]>`
    select app.list_alarms(${owner}, ${filter.status ?? null}, ${filter.direction ?? null}, ${filter.notification ?? null},
      ${filter.page}, ${filter.per_page}) as page`;
  return row!.page;
}

/** app.get_alarm: the owner's alarm as app.alarm_json shows it, or null (none, or another owner's). */
export async function getAlarm<T = unknown>(sql: Sql, owner: string, id: number | string): Promise<T | null> {
  const [row] = await sql<{ data: T | null }[]>`select app.get_alarm(${owner}, ${id}) as data`;
  return row?.data ?? null;
}

/** app.create_alarm with the channels this service can send: {alarm, balance}. */
export async function createAlarm(sql: Sql, config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, owner: string, alarm: NewAlarm) {
  const [row] = await sql<{ created: { alarm: { id: number }; balance: number } }[]>`
    select app.create_alarm(${owner}, ${alarm.name}, ${alarm.coin}, ${alarm.metric}, ${alarm.direction},
      ${alarm.target}, ${alarm.notification}, ${notificationChannels(config)}) as created`;
  return row!.created;
}

/** app.update_alarm with the channels this service can send; target as decimal text. */
export async function updateAlarm(sql: Sql, config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, owner: string, id: number | string, changes: Omit<z.infer<typeof alarmChanges>, 'target'> & { target?: string }) {
  const [row] = await sql<{ data: unknown }[]>`
    select app.update_alarm(${owner}, ${id}, ${sql.json(changes)}, ${notificationChannels(config)}) as data`;
  return row!.data;
}

/** app.delete_alarm: {deleted, balance}. */
export async function deleteAlarm(sql: Sql, owner: string, id: number | string) {
  const [row] = await sql<{ result: { deleted: boolean; balance: number } }[]>`select app.delete_alarm(${owner}, ${id}) as result`;
  return row!.result;
}
