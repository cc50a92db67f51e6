// The e-mails' words: a subject, a plain-text body and an HTML body per kind, from the data the
// outbox recorded (app.email_messages.data). Every value is the database's text (decimals as
// decimal strings, never a float) and is HTML-escaped in the HTML body (by the html template); the
// text body carries it as it is.
import { alarmHeadline, DIRECTION_WORDS as DIRECTION, METRIC_WORDS as METRIC, type AlarmTriggeredData } from '../alarm-wording.ts';
import { type Html, html, joinHtml } from '../html.ts';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** Where the e-mails' links point: the service's public base URL. */
export interface MailLinks {
  base: string;
}

/** data of a deprecation.notice e-mail: app.queue_deprecation_notices (sql/functions/815_deprecation_notices.sql) */
export interface DeprecationNoticeData {
  endpoint: string;
  sunset: string;
  changelog: string;
  last_called_at: string | null;
}

/**
 * data of a console.link e-mail (src/console/auth.ts): what the link does and its path (with the
 * token of a single-use link); account_exists: the answer to a sign-up with an address that has an
 * account, pointing at sign-in and reset (no token, `hours` 0).
 */
export interface ConsoleLinkData {
  purpose: 'verify_email' | 'reset_password' | 'invite' | 'account_exists';
  path: string;
  hours: number;
}

/** label: value lines for the text body, a two-column table for the HTML body */
function facts(rows: [string, string][]) {
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  return {
    text: rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`).join('\n'),
    html: html`<table cellpadding="4" style="border-collapse:collapse">${rows
      .map(([label, value]) => html`<tr><th align="left" style="padding-right:1em">${label}</th><td>${value}</td></tr>`)}</table>`,
  };
}

const paragraphs = (parts: (Html | string)[]) => joinHtml(parts.map((part) => html`<p>${part}</p>`), '\n');
const link = (url: string, label = url) => html`<a href="${url}">${label}</a>`;
const BODY_STYLE = 'font-family:system-ui,sans-serif;line-height:1.5;color:#1b1f24';
const htmlDocument = (title: string, body: Html) =>
  html`<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body style="${BODY_STYLE}">\n${body}\n</body></html>\n`.text;

export function alarmTriggeredEmail(data: AlarmTriggeredData, links: MailLinks): RenderedEmail {
  const coin = `${data.coin.name} (${data.coin.symbol})`;
  const name = data.alarm?.name ?? 'Alarm';
  const subject = `Alarm triggered: ${alarmHeadline(data)}`;
  const table = facts([
    ['Alarm', name],
    ['Coin', coin],
    ['Metric', METRIC[data.metric]],
    ['Direction', data.direction],
    ['Target', data.target],
    ['Value', data.value],
    ['Triggered at', data.triggered_at],
  ]);
  const manage = `${links.base}/api/v1/alarms`;
  const docs = `${links.base}/docs/api#tag/Alarms`;
  const rearm = data.alarm ? `PATCH /api/v1/alarms/${data.alarm.id} with {"status": "active"}` : 'PATCH /api/v1/alarms/{id} with {"status": "active"}';
  const intro = `Your alarm "${name}" triggered: the ${METRIC[data.metric]} of ${coin} reached ${data.value}, ${DIRECTION[data.direction]} your target ${data.target}.`;
  const after = `The alarm stays triggered and sends nothing more until you re-arm it (${rearm}).`;
  return {
    subject,
    text: `${intro}\n\n${table.text}\n\n${after}\n\nManage your alarms (with your API key): ${manage}\nAPI reference: ${docs}\n`,
    html: htmlDocument(subject, html`${paragraphs([intro])}\n${table.html}\n${
      paragraphs([after, html`Manage your alarms (with your API key): ${link(manage)}<br>API reference: ${link(docs, 'Alarms')}`])}`),
  };
}

export function deprecationNoticeEmail(data: DeprecationNoticeData, links: MailLinks): RenderedEmail {
  const subject = `Deprecation notice: ${data.endpoint} may stop answering after ${data.sunset}`;
  const changelog = `${links.base}/changelog#${encodeURIComponent(data.changelog)}`;
  const policy = `${links.base}/versioning`;
  const table = facts([
    ['Operation', data.endpoint],
    ['Sunset', data.sunset],
    ['Your last call', data.last_called_at ?? 'in the last 90 days'],
  ]);
  const intro = `Your API key called ${data.endpoint} in the last 90 days. This operation is deprecated: from ${data.sunset} (its sunset date) it may stop answering.`;
  const meanwhile = 'Until then it answers as before, with Deprecation and Sunset headers on every response.';
  return {
    subject,
    text: `${intro}\n\n${table.text}\n\n${meanwhile}\n\nWhat changes and what to use instead: ${changelog}\nVersioning and deprecation policy: ${policy}\n`,
    html: htmlDocument(subject, html`${paragraphs([intro])}\n${table.html}\n${
      paragraphs([meanwhile, html`What changes and what to use instead: ${link(changelog)}<br>Versioning and deprecation policy: ${link(policy)}`])}`),
  };
}

const CONSOLE_LINK: Record<ConsoleLinkData['purpose'], { subject: string; intro: string }> = {
  verify_email: { subject: 'Confirm your e-mail address', intro: 'Open this link to confirm the e-mail address of your developer console account:' },
  reset_password: { subject: 'Set a new console password', intro: 'Open this link to set a new password for your developer console account:' },
  invite: { subject: 'You are invited to the developer console', intro: 'Open this link to make your developer console account:' },
  account_exists: {
    subject: 'You already have a console account',
    intro: 'Someone (you, perhaps) asked to make a developer console account with this address, which has one already, so no other was made. If you have forgotten its password, set a new one here:',
  },
};

export function consoleLinkEmail(data: ConsoleLinkData, links: MailLinks): RenderedEmail {
  const { subject, intro } = CONSOLE_LINK[data.purpose];
  const url = `${links.base}${data.path}`;
  const after = data.purpose === 'account_exists'
    ? 'If you did not ask for it, ignore this e-mail: nothing was changed.'
    : `The link works once, for ${data.hours} hours. If you did not ask for it, ignore this e-mail.`;
  return {
    subject,
    text: `${intro}\n\n${url}\n\n${after}\n`,
    html: htmlDocument(subject, paragraphs([intro, link(url), after])),
  };
}
