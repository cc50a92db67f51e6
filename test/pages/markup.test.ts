// The public pages' markup (src/pages) and the e-mails' HTML part (src/mail/templates.ts), written
// with the escaping html template: a hostile value (a component's name, a changelog item, a document,
// a coin name, an account's link) comes out as text, never as markup; the e-mails' plain-text part
// carries it as it is. No database: the markup functions are pure.
import test from 'ava';
import { parseChangelog } from '../../src/changelog.ts';
import { html } from '../../src/html.ts';
import { alarmTriggeredEmail, consoleLinkEmail, deprecationNoticeEmail } from '../../src/mail/templates.ts';
import { changelogMarkup } from '../../src/pages/changelog.ts';
import { inline, markdownToHtml } from '../../src/pages/markdown.ts';
import { pageShell } from '../../src/pages/shell.ts';
import { statusMarkup, type StatusReport } from '../../src/pages/status.ts';

const HOSTILE = `<script>alert("x")</script> & 'q'`;
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;';
const links = { base: 'https://api.example.com' };

test('status: a component\'s id, name and figures, the version and time are escaped; the states are the page\'s own words', (t) => {
  const report: StatusReport = {
    status: 'degraded', version: HOSTILE, checked_at: HOSTILE,
    components: [{ id: HOSTILE, name: HOSTILE, state: 'degraded', figures: { [`odd_${HOSTILE}`]: HOSTILE, list: [HOSTILE, 'b'], none: null } }],
  };
  const markup = statusMarkup(report, html` · <a href="/status">public</a>`).text;
  t.false(markup.includes('<script>'), markup);
  t.true(markup.includes(`<tr data-component="${ESCAPED}"><th scope="row">${ESCAPED}</th>`));
  t.true(markup.includes(`<p>Version ${ESCAPED} · checked ${ESCAPED} · <a href="/status">public</a></p>`), 'the links beside it are markup');
  t.true(markup.includes(`<td>odd ${ESCAPED}: ${ESCAPED}<br>list: ${ESCAPED}, b<br>none: —</td>`), 'figures one a line');
  t.true(markup.includes('<td class="degraded" data-state="degraded">Degraded</td>'));
});

test('the page shell: the title and the added navigation links are escaped', (t) => {
  const ctx = { type: '', body: '' };
  pageShell([[`/x?a=1&b="2"`, HOSTILE]])(ctx as never, HOSTILE, html`<h1>Body</h1>`, { refreshSeconds: 30 });
  t.is(ctx.type, 'text/html; charset=utf-8');
  t.false(ctx.body.includes('<script>'), ctx.body);
  t.true(ctx.body.includes(`<title>${ESCAPED} · market-data-api</title>`));
  t.true(ctx.body.includes(`<a href="/x?a=1&amp;b=&quot;2&quot;">${ESCAPED}</a></nav>\n<h1>Body</h1>`));
  t.true(ctx.body.includes('<body data-refresh="30">'));
});

test('changelog: versions, groups and items are escaped, each heading under its anchor', (t) => {
  const versions = parseChangelog(`# Changelog\n\n## [1.0.0] - 2026-01-02\n\n### Added <b>\n\n- ${HOSTILE} with \`<code>\` and a [link](/docs?a="1")\n`);
  const markup = changelogMarkup(versions).text;
  t.false(markup.includes('<script>') || markup.includes('<b>') || markup.includes('<code><code>'), markup);
  t.is(markup, '<section><h2 id="1.0.0">1.0.0 — 2026-01-02</h2>\n<h3 id="1.0.0-added-b">Added &lt;b&gt;</h3>\n' +
    `<ul><li>${ESCAPED} with <code>&lt;code&gt;</code> and a <a href="/docs?a=&quot;1&quot;">link</a></li></ul></section>`);
});

test('documents: text, code and table cells escaped; a link only to this service, the web or mail', (t) => {
  const markup = markdownToHtml(`# A <b> title\n\n${HOSTILE} [x](javascript:void) [y](https://e.example/?q="1")\n\n| <i> |\n|---|\n| \`<td>\` |\n\n\`\`\`\n${HOSTILE}\n\`\`\`\n`).text;
  t.false(/<(script|b|i)>/.test(markup), markup);
  t.true(markup.includes('<h1 id="a-b-title">A &lt;b&gt; title</h1>'));
  t.true(markup.includes(`<p>${ESCAPED} x <a href="https://e.example/?q=&quot;1&quot;">y</a></p>`), 'a javascript: link is its label');
  t.true(markup.includes('<th>&lt;i&gt;</th>') && markup.includes('<td><code>&lt;td&gt;</code></td>'));
  t.true(markup.includes(`<pre tabindex="0"><code>${ESCAPED}</code></pre>`));
  t.is(inline('**bold [a _b_](/c)** and `**not bold**`').text, '<strong>bold <a href="/c">a <em>b</em></a></strong> and <code>**not bold**</code>');
});

test('e-mail: the HTML part escapes every value (coin, alarm name, operation, link); the text part carries them as they are', (t) => {
  const alarm = alarmTriggeredEmail({
    alarm: { id: 7, name: HOSTILE }, coin: { slug: 'alpha', name: `Alpha ${HOSTILE}`, symbol: 'A"L' }, metric: 'rate', direction: 'above',
    target: '150.10', value: '150.5000', triggered_at: '2026-11-28T10:00:00Z',
  }, links);
  const deprecation = deprecationNoticeEmail({ endpoint: `GET /api/v1/${HOSTILE}`, sunset: '2027-01-01', changelog: '0.2.0-"x"', last_called_at: null }, links);
  const link = consoleLinkEmail({ purpose: 'invite', path: '/console/invite?token=a&b="c"', hours: 24 }, { base: `https://e.example/${HOSTILE}` });
  for (const [name, mail] of Object.entries({ alarm, deprecation, link })) {
    t.false(mail.html.includes('<script>'), `${name}: ${mail.html}`);
    t.true(mail.html.includes(ESCAPED), `${name}: escaped in the HTML part`);
    t.true(mail.text.includes(HOSTILE), `${name}: as it is in the text part`);
    t.false(mail.text.includes('&lt;') || mail.text.includes('&amp;'), `${name}: nothing escaped in the text part`);
  }
  t.true(alarm.html.includes(`<title>Alarm triggered: Alpha ${ESCAPED} (A&quot;L) price (USD) at or above 150.10</title>`));
  t.true(alarm.html.includes(`<tr><th align="left" style="padding-right:1em">Alarm</th><td>${ESCAPED}</td></tr>`));
  t.true(deprecation.html.includes('<a href="https://api.example.com/changelog#0.2.0-%22x%22">'), 'the anchor is URL-encoded, then escaped');
  t.true(link.html.includes(`<p><a href="https://e.example/${ESCAPED}/console/invite?token=a&amp;b=&quot;c&quot;">`));
});
