// The account's alarms: the list with each coin's current value, the target and the distance to it,
// and forms to create, edit, delete and re-arm. The same zod schemas and SQL functions as
// /api/v1/alarms (the alarm core, src/alarms.ts), so the same validation, inventory and instant-trigger guard;
// their 422s are shown beside the field they concern. The notification channels offered are the
// ones this service can send now: e-mail with SMTP, webhook once the account has an endpoint.
// Markup in ./alarms.views.ts.
import type { Context } from 'koa';
import { alarmChanges, createAlarm, deleteAlarm, getAlarm, newAlarmBody, notificationChannels, updateAlarm } from '../alarms.ts';
import type { Config } from '../config.ts';
import { navigation, notice, type Html } from './html.ts';
import { fieldErrors, pageNumber, Refused, refusal, rowId, type Account, type Errors, type Fields, type Kit, type PageGroup } from './kit.ts';
import { alarmsView, DONE, doneView, editView, PER_PAGE, type AlarmRow, type AlarmsPage, type Done, type Typed } from './alarms.views.ts';

/** The API's own error codes, and the field each one is about. */
const FIELD_OF_CODE = {
  alarm_would_trigger: 'target', no_current_value: 'metric',
  email_not_configured: 'notification', email_address_missing: 'notification', push_not_available: 'notification',
};
const GONE = 'That alarm does not exist (deleted in another tab?); nothing was changed.';

/** How many webhook endpoints and browsers subscribed to push an account has. */
interface Reach { endpoints: number; browsers: number }

/** What this service can send to this account: e-mail with SMTP, webhook once it has an endpoint, push once a browser is subscribed. */
const channelsOffered = (config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, { endpoints, browsers }: Reach) =>
  notificationChannels(config).filter((channel) => (channel !== 'webhook' || endpoints > 0) && (channel !== 'push' || browsers > 0));

/** A form on one alarm (edit: '', or /rearm, /delete): what it did, or throws Refused / the API's refusal. */
type AlarmAction = (kit: Kit, who: Account, alarm: AlarmRow, fields: Fields) => Promise<Done>;

export const alarmPages: PageGroup = (routes, kit) => {
  navigation('/console/alarms', 'Alarms');
  routes.signedIn.get('/alarms', async (ctx, who) => alarmsPage(kit, ctx, who, {}, { message: await doneNotice(kit, ctx, who) }));
  routes.signedIn.post('/alarms', (ctx, who, fields) => create(kit, ctx, who, fields));
  routes.signedIn.get('/alarms/:id', async (ctx, who) => {
    const alarm = await ownAlarm(kit, ctx, who);
    if (alarm) await editPage(kit, ctx, who, alarm);
  });
  const onAlarm = (action: string, keepTyped: boolean, act: AlarmAction) =>
    routes.signedIn.post(`/alarms/:id${action}`, (ctx, who, fields) => actOnAlarm(kit, ctx, who, fields, keepTyped, act));
  onAlarm('', true, save);
  // the guard's refusal is shown beside the field to change (the target, mostly) on the alarm's own form
  onAlarm('/rearm', false, rearm);
  onAlarm('/delete', false, remove);
};

const reach = async ({ sql }: Kit, owner: string): Promise<Reach> => (await sql<Reach[]>`select * from app.console_alarm_reach(${owner})`)[0]!;

/**
 * Refuses webhook to an account without an endpoint (a form from before its endpoint was deleted):
 * the API takes it, the console does not offer it. What the service cannot send at all (push,
 * e-mail without SMTP) is refused by the API's SQL, as it is there.
 */
const noEndpoint = async (kit: Kit, owner: string, notification: string | undefined, current?: string): Promise<Errors> =>
  notification === 'webhook' && current !== 'webhook' && (await reach(kit, owner)).endpoints === 0
    ? { notification: 'You have no webhook endpoint: add one on the Webhooks page first, or choose another channel.' }
    : {};

/** The list and the create form (`typed`: a refused creation's values and errors). */
async function alarmsPage({ sql, config, csrf, page }: Kit, ctx: Context, who: Account, typed: Typed, { message, status = 200 }: { message?: Html; status?: number } = {}) {
  const pageNo = pageNumber(ctx.query.page);
  const [row] = await sql<{ page: AlarmsPage }[]>`select app.console_alarms(${who.owner}, ${pageNo}, ${PER_PAGE}) as page`;
  const list = row!.page;
  const offered = channelsOffered(config, { endpoints: list.webhook_endpoints, browsers: list.push_browsers });
  page(ctx, 'Alarms', alarmsView(who, list, pageNo, offered, csrf(ctx), typed, message), status, who);
}

const gonePage = (kit: Kit, ctx: Context, who: Account) => alarmsPage(kit, ctx, who, {}, { message: notice(GONE, 'error'), status: 404 });

/** The account's alarm of an id as a URL gives it, or null (not a row id, not this account's). */
async function findAlarm({ sql }: Kit, who: Account, idText: unknown): Promise<AlarmRow | null> {
  const id = rowId.safeParse(idText);
  return id.success ? getAlarm<AlarmRow>(sql, who.owner, id.data) : null;
}

/** The alarm of the path's id, or null when it is not this account's (the list is written with a 404). */
async function ownAlarm(kit: Kit, ctx: Context, who: Account): Promise<AlarmRow | null> {
  const alarm = await findAlarm(kit, who, ctx.params.id);
  if (!alarm) await gonePage(kit, ctx, who);
  return alarm;
}

/** The notice of `?done=` (and the alarm it names, looked up for this account: the URL carries no text). */
async function doneNotice(kit: Kit, ctx: Context, who: Account): Promise<Html | undefined> {
  const done = DONE.find((one) => one === ctx.query.done);
  if (!done) return undefined;
  return doneView(done, done === 'deleted' ? null : await findAlarm(kit, who, ctx.query.alarm));
}

/** After a form did its work: 303 to the list, which says what was done (post, redirect, get). */
function seeList(ctx: Context, done: Done, id?: number) {
  ctx.redirect(`/console/alarms?done=${done}${id === undefined ? '' : `&alarm=${id}`}`);
  ctx.status = 303;
}

async function editPage(kit: Kit, ctx: Context, who: Account, alarm: AlarmRow, typed: Typed = {}, status = 200) {
  const offered = channelsOffered(kit.config, await reach(kit, who.owner));
  kit.page(ctx, `Alarm: ${alarm.name}`, editView(who, alarm, offered, kit.csrf(ctx), typed), status, who);
}

async function create(kit: Kit, ctx: Context, who: Account, fields: Fields) {
  const parsed = newAlarmBody.safeParse(fields);
  const errors = parsed.success ? await noEndpoint(kit, who.owner, parsed.data.notification) : fieldErrors(parsed.error);
  if (!parsed.success || Object.keys(errors).length) return alarmsPage(kit, ctx, who, { values: fields, errors }, { status: 422 });
  let created: Awaited<ReturnType<typeof createAlarm>>;
  try {
    created = await createAlarm(kit.sql, kit.config, who.owner, { ...parsed.data, target: String(parsed.data.target) });
  } catch (error) {
    const refused = refusal(error, FIELD_OF_CODE);
    return alarmsPage(kit, ctx, who, { values: fields, errors: refused.errors }, { status: refused.status });
  }
  seeList(ctx, 'created', created.alarm.id);
}

/**
 * A form on one alarm of the account: `act` says what it did (the list it redirects to tells it).
 * A refusal (Refused, or the API's 422/409) is shown on the alarm's own form, beside the field it
 * concerns, with what was typed when `keepTyped`; a 404 on the list.
 */
async function actOnAlarm(kit: Kit, ctx: Context, who: Account, fields: Fields, keepTyped: boolean, act: AlarmAction) {
  const alarm = await ownAlarm(kit, ctx, who);
  if (!alarm) return;
  let done: Done;
  try {
    done = await act(kit, who, alarm, fields);
  } catch (error) {
    const refused = error instanceof Refused ? { status: 422, errors: error.errors } : refusal(error, FIELD_OF_CODE);
    if (refused.status === 404) return gonePage(kit, ctx, who);
    return editPage(kit, ctx, who, alarm, { values: keepTyped ? fields : undefined, errors: refused.errors }, refused.status);
  }
  seeList(ctx, done, done === 'deleted' ? undefined : alarm.id);
}

const save: AlarmAction = async (kit, who, alarm, fields) => {
  const parsed = alarmChanges.safeParse(fields);
  if (!parsed.success) throw new Refused(fieldErrors(parsed.error));
  const errors = await noEndpoint(kit, who.owner, parsed.data.notification, alarm.notification);
  if (Object.keys(errors).length) throw new Refused(errors);
  const { target, ...changes } = parsed.data;
  await updateAlarm(kit.sql, kit.config, who.owner, alarm.id, { ...changes, ...(target === undefined ? {} : { target: String(target) }) });
  return 'saved';
};

const rearm: AlarmAction = async (kit, who, alarm) => {
  await updateAlarm(kit.sql, kit.config, who.owner, alarm.id, { status: 'active' });
  return 'rearmed';
};

const remove: AlarmAction = async (kit, who, alarm) => {
  await deleteAlarm(kit.sql, who.owner, alarm.id);
  return 'deleted';
};
