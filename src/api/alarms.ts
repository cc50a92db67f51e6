// Alarms group: the routes of the key owner's TARGET alarms on coins (create, list, get, update,
// delete) with the inventory balance. The schemas and operations are the alarm core (src/alarms.ts);
// evaluation runs in SQL after each price refresh (sql/functions/625_alarm_evaluation.sql).
import type { Context } from 'koa';
import { z } from 'zod';
import { Alarm, alarmChanges, createAlarm, deleteAlarm, DIRECTIONS, getAlarm, listAlarms, newAlarmBody, NOTIFICATIONS, STATUSES, updateAlarm } from '../alarms.ts';
import { pageAnswer } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { defineRoute } from '../http/routes.ts';
import { envelope, int, pageOf } from '../http/schemas.ts';
import { query } from '../http/validation.ts';

const tag = 'Alarms';
const balanceMeta = z.object({ balance: int('Alarms left in the owner\'s inventory.') });

const idParams = z.object({ id: query.int(1, 2_147_483_647).describe('Alarm id.') });

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
      const { total, balance, data } = await listAlarms(sql, key.owner, q);
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
      const data = await getAlarm(sql, key.owner, id);
      if (!data) throw ApiError.notFound('alarm');
      return { data };
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
