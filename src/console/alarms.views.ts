// The alarms pages' markup (./alarms.ts): the list with the create form, and one alarm's edit page.
import { DIRECTIONS, METRICS } from '../alarms.ts';
import { choice, field, form, html, notice, type Html } from './html.ts';
import { when, type Account, type Errors, type Fields } from './kit.ts';

export const PER_PAGE = 25;
const METRIC_LABELS: Record<(typeof METRICS)[number], string> = { rate: 'price (USD)', volume: '24h volume (USD)', marketcap: 'market cap (USD)' };
const DIRECTION_LABELS: Record<(typeof DIRECTIONS)[number], string> = { above: 'at or above', below: 'at or below' };

/** An alarm as app.alarm_json shows it, with what app.console_alarms adds. */
export interface AlarmRow {
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

/** A page of app.console_alarms. */
export interface AlarmsPage { total: number; balance: number; webhook_endpoints: number; push_browsers: number; data: AlarmRow[] }

/** What a form shows again: the values typed and the errors beside them. */
export interface Typed { values?: Fields; errors?: Errors }

/** The channel select: those offered, and the alarm's own one when it has another (kept as it is). */
function channelChoice(who: Account, offered: string[], values: Fields, errors: Errors, current?: string) {
  const channels = current && !offered.includes(current) ? [...offered, current] : offered;
  const label = (channel: string) => (channel === 'email' ? `E-mail to ${who.email}` : channel === 'webhook' ? 'Webhook (your endpoints)' : channel === 'push' ? 'Push to your subscribed browsers' : `${channel} (not available)`);
  return choice({ name: 'notification', label: 'Notify by', options: channels.map((channel) => [channel, label(channel)] as const), value: values.notification, error: errors.notification });
}

/** The fields of an alarm, shared by the create and edit forms. */
const alarmFields = (who: Account, offered: string[], values: Fields, errors: Errors, current?: string) => [
  errors.form ? notice(errors.form, 'error') : html``,
  field({ name: 'name', label: 'Name', value: values.name, error: errors.name }),
  field({ name: 'coin', label: 'Coin (its slug, e.g. bitcoin)', value: values.coin, error: errors.coin, coins: 'one' }),
  choice({ name: 'metric', label: 'Value', options: METRICS.map((metric) => [metric, METRIC_LABELS[metric]] as const), value: values.metric, error: errors.metric }),
  choice({ name: 'direction', label: 'Triggers when the value is', options: DIRECTIONS.map((direction) => [direction, DIRECTION_LABELS[direction]] as const), value: values.direction, error: errors.direction }),
  field({ name: 'target', label: 'Target (a decimal number, e.g. 65000.50)', value: values.target, error: errors.target }),
  channelChoice(who, offered, values, errors, current),
];

const distance = (alarm: AlarmRow) => (alarm.distance === null || alarm.distance === undefined ? 'unknown' : `${alarm.distance}${alarm.distance_percent === null ? '' : ` (${alarm.distance_percent} %)`}`);
const triggered = (alarm: AlarmRow) => html`<strong>triggered</strong> ${when(alarm.triggered_at!)} at ${alarm.triggered_value}`;

const alarmRow = (alarm: AlarmRow, csrf: string) => html`<tr><td data-label="Name">${alarm.name}</td><td data-label="Coin">${alarm.coin.name} (${alarm.coin.symbol})</td>
<td data-label="Condition">${METRIC_LABELS[alarm.metric]} ${DIRECTION_LABELS[alarm.direction]}</td><td data-label="Target" class="num">${alarm.target}</td>
<td data-label="Current value" class="num">${alarm.current_value ?? 'none'}</td>
<td data-label="Distance">${distance(alarm)}</td>
<td data-label="Status">${alarm.status === 'active' ? 'armed' : triggered(alarm)}<br>notifies by ${alarm.notification}</td>
<td class="row-actions"><a href="/console/alarms/${String(alarm.id)}">Edit</a>
${alarm.status === 'triggered' ? form(`/console/alarms/${alarm.id}/rearm`, csrf, [], `Re-arm ${alarm.name}`) : ''}
${form(`/console/alarms/${alarm.id}/delete`, csrf, [], `Delete ${alarm.name}`, 'danger')}</td></tr>`;

/** The list (a page of it) and the create form. */
export function alarmsView(who: Account, { total, balance, data }: AlarmsPage, pageNo: number, offered: string[], csrf: string, { values = {}, errors = {} }: Typed, message?: Html) {
  const lastPage = Math.max(1, Math.ceil(total / PER_PAGE));
  return html`${message ?? ''}
<h2>Your alarms</h2>
${data.length === 0 ? html`<p>${total === 0 ? 'No alarm yet.' : 'No alarm on this page.'}</p>` : html`<div class="table"><table><thead><tr><th>Name</th><th>Coin</th><th>Condition</th><th>Target</th><th>Current value</th><th>Distance</th><th>Status</th><th>Actions</th></tr></thead><tbody>
${data.map((alarm) => alarmRow(alarm, csrf))}
</tbody></table></div>
<p>Page ${pageNo} of ${lastPage}.${pageNo > 1 ? html` <a href="/console/alarms?page=${String(pageNo - 1)}">Newer</a>` : ''}${pageNo < lastPage ? html` <a href="/console/alarms?page=${String(pageNo + 1)}" rel="next">Older</a>` : ''}</p>`}
<h2>Create an alarm</h2>
<p>${balance} left in your alarm inventory (deleting an alarm gives one back).</p>
${offered.length === 0
    ? html`<p>This service sends no e-mail, so alarms notify by webhook: <a href="/console/webhooks">add a webhook endpoint</a> first.</p>`
    : form('/console/alarms', csrf, alarmFields(who, offered, values, errors), 'Create alarm')}`;
}

/** One alarm: its edit form, re-arm when triggered, delete. */
export function editView(who: Account, alarm: AlarmRow, offered: string[], csrf: string, { values, errors = {} }: Typed) {
  const shown = values ?? { name: alarm.name, coin: alarm.coin.slug, metric: alarm.metric, direction: alarm.direction, target: alarm.target, notification: alarm.notification };
  return html`<p>${alarm.status === 'active' ? 'Armed.' : html`<strong>Triggered</strong> ${when(alarm.triggered_at!)} at ${alarm.triggered_value}.`} <a href="/console/alarms">All alarms</a></p>
${form(`/console/alarms/${alarm.id}`, csrf, alarmFields(who, offered, shown, errors, alarm.notification), 'Save changes')}
${alarm.status === 'triggered' ? html`<h2>Re-arm</h2><p>Arms it again with its condition as saved: refused if the current value already meets the target.</p>${form(`/console/alarms/${alarm.id}/rearm`, csrf, [], 'Re-arm')}` : ''}
<h2>Delete</h2>${form(`/console/alarms/${alarm.id}/delete`, csrf, [], 'Delete this alarm', 'danger')}`;
}

/** What a form did, told by the list it redirects to (`?done=`): a reload or Back then re-posts nothing. */
export const DONE = ['created', 'saved', 'rearmed', 'deleted'] as const;
export type Done = (typeof DONE)[number];

/** The notice of a `?done=`, naming the alarm (when not deleted). */
export function doneView(done: Done, alarm: AlarmRow | null): Html | undefined {
  if (done === 'deleted') return notice(html`Alarm deleted; one is back in your inventory.`);
  if (!alarm) return undefined;
  const name = html`<strong>${alarm.name}</strong>`;
  return notice(done === 'created' ? html`Alarm ${name} created and armed.` : done === 'saved' ? html`Alarm ${name} saved.` : html`Alarm ${name} re-armed.`);
}
