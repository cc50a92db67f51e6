// The account's alarms: the list with each coin's current value, the target and the distance to it,
// and forms to create, edit, delete and re-arm. The same zod schemas and SQL functions as
// /api/v1/alarms (the alarm core, src/alarms.ts), so the same validation, inventory and instant-trigger guard;
// their 422s are shown beside the field they concern. The notification channels offered are the
// ones this service can send now: e-mail with SMTP, webhook once the account has an endpoint.
import type { Context } from 'koa';
import { alarmChanges, createAlarm, deleteAlarm, DIRECTIONS, getAlarm, METRICS, newAlarmBody, notificationChannels, updateAlarm } from '../alarms.ts';
import type { Config } from '../config.ts';
import { choice, field, form, html, navigation, notice, type Html } from './html.ts';
import { fieldErrors, pageNumber, Refused, refusal, rowId, when, type Account, type Errors, type Fields, type PageGroup } from './kit.ts';

const PER_PAGE = 25;
const METRIC_LABELS: Record<(typeof METRICS)[number], string> = { rate: 'price (USD)', volume: '24h volume (USD)', marketcap: 'market cap (USD)' };
const DIRECTION_LABELS: Record<(typeof DIRECTIONS)[number], string> = { above: 'at or above', below: 'at or below' };
/** The API's own error codes, and the field each one is about. */
const FIELD_OF_CODE = {
  alarm_would_trigger: 'target', no_current_value: 'metric',
  email_not_configured: 'notification', email_address_missing: 'notification', push_not_available: 'notification',
};
const GONE = 'That alarm does not exist (deleted in another tab?); nothing was changed.';
/** What a form did, told by the list it redirects to (`?done=`): a reload or Back then re-posts nothing. */
const DONE = ['created', 'saved', 'rearmed', 'deleted'] as const;
type Done = (typeof DONE)[number];

/** An alarm as app.alarm_json shows it, with what app.console_alarms adds. */
interface AlarmRow {
  id: number;
  name: string;
  coin: { slug: string; symbol: string; name: string };
  metric: (typeof METRICS)[number];
  direction: (typeof DIRECTIONS)[number];
  target: string;
  notification: string;
  status: 'active' | 'triggered';
  triggered_value: string | null;
  triggered_at: string | null;
  current_value?: string | null;
  distance?: string | null;
  distance_percent?: string | null;
}

/** What this service can send to this account: e-mail with SMTP, webhook once it has an endpoint, push once a browser is subscribed. */
const channelsOffered = (config: Pick<Config, 'SMTP_URL' | 'CONSOLE'>, { endpoints, browsers }: Reach) =>
  notificationChannels(config).filter((channel) => (channel !== 'webhook' || endpoints > 0) && (channel !== 'push' || browsers > 0));

/** How many webhook endpoints and browsers subscribed to push an account has. */
interface Reach { endpoints: number; browsers: number }

export const alarmPages: PageGroup = (router, { sql, config, csrf, page, signedIn, signedInForm }) => {
  navigation('/console/alarms', 'Alarms');

  const reach = async (owner: string): Promise<Reach> => (await sql<Reach[]>`select * from app.console_alarm_reach(${owner})`)[0]!;

  /** The channel select: those offered, and the alarm's own one when it has another (kept as it is). */
  const channelChoice = (who: Account, offered: string[], values: Fields, errors: Errors, current?: string) => {
    const channels = current && !offered.includes(current) ? [...offered, current] : offered;
    const label = (channel: string) => (channel === 'email' ? `E-mail to ${who.email}` : channel === 'webhook' ? 'Webhook (your endpoints)' : channel === 'push' ? 'Push to your subscribed browsers' : `${channel} (not available)`);
    return choice({ name: 'notification', label: 'Notify by', options: channels.map((channel) => [channel, label(channel)] as const), value: values.notification, error: errors.notification });
  };

  /** The fields of an alarm, shared by the create and edit forms. */
  const alarmFields = (who: Account, offered: string[], values: Fields, errors: Errors, current?: string) => [
    errors.form ? notice(errors.form, 'error') : html``,
    field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
    field({ name: 'coin', label: 'Coin (its slug, e.g. bitcoin)', value: values.coin, error: errors.coin }),
    choice({ name: 'metric', label: 'Value', options: METRICS.map((metric) => [metric, METRIC_LABELS[metric]] as const), value: values.metric, error: errors.metric }),
    choice({ name: 'direction', label: 'Triggers when the value is', options: DIRECTIONS.map((direction) => [direction, DIRECTION_LABELS[direction]] as const), value: values.direction, error: errors.direction }),
    field({ name: 'target', label: 'Target (a decimal number, e.g. 65000.50)', value: values.target, error: errors.target }),
    channelChoice(who, offered, values, errors, current),
  ];

  /**
   * Refuses webhook to an account without an endpoint (a form from before its endpoint was deleted):
   * the API takes it, the console does not offer it. What the service cannot send at all (push,
   * e-mail without SMTP) is refused by the API's SQL, as it is there.
   */
  const noEndpoint = async (owner: string, notification: string | undefined, current?: string): Promise<Errors> =>
    notification === 'webhook' && current !== 'webhook' && (await reach(owner)).endpoints === 0
      ? { notification: 'You have no webhook endpoint: add one on the Webhooks page first, or choose another channel.' }
      : {};

  // ---- the list and the create form
  async function alarmsPage(ctx: Context, who: Account, extra: { message?: Html; values?: Fields; errors?: Errors; status?: number } = {}) {
    const pageNo = pageNumber(ctx.query.page);
    const [row] = await sql<{ page: { total: number; balance: number; webhook_endpoints: number; push_browsers: number; data: AlarmRow[] } }[]>`
      select app.console_alarms(${who.owner}, ${pageNo}, ${PER_PAGE}) as page`;
    const { total, balance, webhook_endpoints: endpoints, push_browsers: browsers, data } = row!.page;
    const offered = channelsOffered(config, { endpoints, browsers });
    const token = csrf(ctx);
    const { values = {}, errors = {} } = extra;
    const lastPage = Math.max(1, Math.ceil(total / PER_PAGE));
    page(ctx, 'Alarms', html`${extra.message ?? ''}
<h2>Your alarms</h2>
${data.length === 0 ? html`<p>${total === 0 ? 'No alarm yet.' : 'No alarm on this page.'}</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Coin</th><th>Condition</th><th>Target</th><th>Current value</th><th>Distance</th><th>Status</th><th>Actions</th></tr></thead><tbody>
${data.map((alarm) => html`<tr><td data-label="Name">${alarm.name}</td><td data-label="Coin">${alarm.coin.name} (${alarm.coin.symbol})</td>
<td data-label="Condition">${METRIC_LABELS[alarm.metric]} ${DIRECTION_LABELS[alarm.direction]}</td><td data-label="Target" class="num">${alarm.target}</td>
<td data-label="Current value" class="num">${alarm.current_value ?? 'none'}</td>
<td data-label="Distance">${alarm.distance === null || alarm.distance === undefined ? 'unknown' : `${alarm.distance}${alarm.distance_percent === null ? '' : ` (${alarm.distance_percent} %)`}`}</td>
<td data-label="Status">${alarm.status === 'active' ? 'armed' : html`<strong>triggered</strong> ${when(alarm.triggered_at!)} at ${alarm.triggered_value}`}<br>notifies by ${alarm.notification}</td>
<td class="row-actions"><a href="/console/alarms/${String(alarm.id)}">Edit</a>
${alarm.status === 'triggered' ? form(`/console/alarms/${alarm.id}/rearm`, token, [], `Re-arm ${alarm.name}`) : ''}
${form(`/console/alarms/${alarm.id}/delete`, token, [], `Delete ${alarm.name}`, 'danger')}</td></tr>`)}
</tbody></table></div>
<p>Page ${pageNo} of ${lastPage}.${pageNo > 1 ? html` <a href="/console/alarms?page=${String(pageNo - 1)}">Newer</a>` : ''}${pageNo < lastPage ? html` <a href="/console/alarms?page=${String(pageNo + 1)}" rel="next">Older</a>` : ''}</p>`}
<h2>Create an alarm</h2>
<p>${balance} left in your alarm inventory (deleting an alarm gives one back).</p>
${offered.length === 0
    ? html`<p>This service sends no e-mail, so alarms notify by webhook: <a href="/console/webhooks">add a webhook endpoint</a> first.</p>`
    : form('/console/alarms', token, alarmFields(who, offered, values, errors), 'Create alarm')}`, extra.status ?? 200, who);
  }

  /** The account's alarm of an id as a URL gives it, or null (not a row id, not this account's). */
  async function findAlarm(who: Account, idText: unknown): Promise<AlarmRow | null> {
    const id = rowId.safeParse(idText);
    return id.success ? getAlarm<AlarmRow>(sql, who.owner, id.data) : null;
  }

  /** After a form did its work: 303 to the list, which says what was done (post, redirect, get). */
  function seeList(ctx: Context, done: Done, id?: number) {
    ctx.redirect(`/console/alarms?done=${done}${id === undefined ? '' : `&alarm=${id}`}`);
    ctx.status = 303;
  }

  /** The notice of `?done=` (and the alarm it names, looked up for this account: the URL carries no text). */
  async function doneNotice(ctx: Context, who: Account): Promise<Html | undefined> {
    const done = DONE.find((one) => one === ctx.query.done);
    if (!done) return undefined;
    if (done === 'deleted') return notice(html`Alarm deleted; one is back in your inventory.`);
    const alarm = await findAlarm(who, ctx.query.alarm);
    if (!alarm) return undefined;
    const name = html`<strong>${alarm.name}</strong>`;
    return notice(done === 'created' ? html`Alarm ${name} created and armed.` : done === 'saved' ? html`Alarm ${name} saved.` : html`Alarm ${name} re-armed.`);
  }

  router.get('/alarms', async (ctx) => {
    const who = await signedIn(ctx);
    if (who) await alarmsPage(ctx, who, { message: await doneNotice(ctx, who) });
  });
  router.post('/alarms', async (ctx) => {
    const posted = await signedInForm(ctx);
    if (!posted) return;
    const { fields, who } = posted;
    const parsed = newAlarmBody.safeParse(fields);
    const errors = parsed.success ? await noEndpoint(who.owner, parsed.data.notification) : fieldErrors(parsed.error);
    if (!parsed.success || Object.keys(errors).length) return alarmsPage(ctx, who, { values: fields, errors, status: 422 });
    let created: Awaited<ReturnType<typeof createAlarm>>;
    try {
      created = await createAlarm(sql, config, who.owner, { ...parsed.data, target: String(parsed.data.target) });
    } catch (error) {
      const refused = refusal(error, FIELD_OF_CODE);
      return alarmsPage(ctx, who, { values: fields, errors: refused.errors, status: refused.status });
    }
    seeList(ctx, 'created', created.alarm.id);
  });

  // ---- one alarm: edit, re-arm, delete
  /** The alarm of the path's id, or null when it is not this account's (the list is written with a 404). */
  async function ownAlarm(ctx: Context, who: Account): Promise<AlarmRow | null> {
    const alarm = await findAlarm(who, ctx.params.id);
    if (alarm) return alarm;
    await alarmsPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
    return null;
  }

  async function editPage(ctx: Context, who: Account, alarm: AlarmRow, extra: { values?: Fields; errors?: Errors; status?: number } = {}) {
    const offered = channelsOffered(config, await reach(who.owner));
    const values = extra.values ?? { name: alarm.name, coin: alarm.coin.slug, metric: alarm.metric, direction: alarm.direction, target: alarm.target, notification: alarm.notification };
    const token = csrf(ctx);
    page(ctx, `Alarm: ${alarm.name}`, html`<p>${alarm.status === 'active' ? 'Armed.' : html`<strong>Triggered</strong> ${when(alarm.triggered_at!)} at ${alarm.triggered_value}.`} <a href="/console/alarms">All alarms</a></p>
${form(`/console/alarms/${alarm.id}`, token, alarmFields(who, offered, values, extra.errors ?? {}, alarm.notification), 'Save changes')}
${alarm.status === 'triggered' ? html`<h2>Re-arm</h2><p>Arms it again with its condition as saved: refused if the current value already meets the target.</p>${form(`/console/alarms/${alarm.id}/rearm`, token, [], 'Re-arm')}` : ''}
<h2>Delete</h2>${form(`/console/alarms/${alarm.id}/delete`, token, [], 'Delete this alarm', 'danger')}`, extra.status ?? 200, who);
  }

  router.get('/alarms/:id', async (ctx) => {
    const who = await signedIn(ctx);
    const alarm = who && (await ownAlarm(ctx, who));
    if (alarm) await editPage(ctx, who!, alarm);
  });
  /**
   * A form on one alarm of the account (edit: '', or /rearm, /delete): `act` says what it did (the
   * list it redirects to tells it), or throws Refused. A refusal (Refused, or the API's 422/409) is shown on the
   * alarm's own form, beside the field it concerns, with what was typed when `keepTyped`; a 404 on
   * the list.
   */
  function onAlarm(action: string, keepTyped: boolean, act: (who: Account, alarm: AlarmRow, fields: Fields) => Promise<Done>) {
    router.post(`/alarms/:id${action}`, async (ctx) => {
      const posted = await signedInForm(ctx);
      const alarm = posted && (await ownAlarm(ctx, posted.who));
      if (!alarm) return;
      const { fields, who } = posted!;
      let done: Done;
      try {
        done = await act(who, alarm, fields);
      } catch (error) {
        const refused = error instanceof Refused ? { status: 422, errors: error.errors } : refusal(error, FIELD_OF_CODE);
        if (refused.status === 404) return alarmsPage(ctx, who, { message: notice(GONE, 'error'), status: 404 });
        return editPage(ctx, who, alarm, { values: keepTyped ? fields : undefined, errors: refused.errors, status: refused.status });
      }
      seeList(ctx, done, done === 'deleted' ? undefined : alarm.id);
    });
  }
  onAlarm('', true, async (who, alarm, fields) => {
    const parsed = alarmChanges.safeParse(fields);
    if (!parsed.success) throw new Refused(fieldErrors(parsed.error));
    const errors = await noEndpoint(who.owner, parsed.data.notification, alarm.notification);
    if (Object.keys(errors).length) throw new Refused(errors);
    const { target, ...changes } = parsed.data;
    await updateAlarm(sql, config, who.owner, alarm.id, { ...changes, ...(target === undefined ? {} : { target: String(target) }) });
    return 'saved';
  });
  // the guard's refusal is shown beside the field to change (the target, mostly) on the alarm's own form
  onAlarm('/rearm', false, async (who, alarm) => {
    await updateAlarm(sql, config, who.owner, alarm.id, { status: 'active' });
    return 'rearmed';
  });
  onAlarm('/delete', false, async (who, alarm) => {
    await deleteAlarm(sql, who.owner, alarm.id);
    return 'deleted';
  });
};
