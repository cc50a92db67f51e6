// Console markup: the one layout every page uses and its form parts, written with the escaping
// template of src/html.ts (shared with the widgets and the other pages).
import { Html, html } from '../html.ts';

export { Html, html };

export interface Page {
  title: string;
  body: Html;
  /** the signed-in account, for the navigation */
  who?: { email: string; role: string } | null;
  /** the page's path: its navigation link is marked current */
  path: string;
  csrf: string;
  nonce: string;
  /** a page's own scripts (ES modules) and style sheets beside the console's, by name under /console/assets/ */
  assets?: PageAssets;
}

export interface PageAssets {
  scripts?: string[];
  styles?: string[];
}

/** The signed-in navigation: [path, label], and the operator's pages for an admin. */
const NAV: [string, string][] = [['/console/keys', 'Data API keys'], ['/console/mcp-keys', 'MCP keys'], ['/console/account', 'Account']];
const ADMIN_NAV: [string, string][] = [];

/** Adds a page to the signed-in navigation (a page group does, when mounted). */
export function navigation(path: string, label: string, admin = false) {
  const list = admin ? ADMIN_NAV : NAV;
  if (!list.some(([known]) => known === path)) list.push([path, label]);
}

export function layout({ title, body, who, path, csrf, nonce, assets = {} }: Page): string {
  const links = [...NAV, ...(who?.role === 'admin' ? ADMIN_NAV : [])]
    .map(([href, label]) => html`<a href="${href}"${path === href || path.startsWith(`${href}/`) ? html` aria-current="page"` : ''}>${label}</a> `);
  const nav = who
    ? html`<nav aria-label="Console">${links}
<form method="post" action="/console/sign-out" class="inline secondary"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form></nav>`
    : html`<nav aria-label="Console"><a href="/console/sign-in">Sign in</a></nav>`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Developer console</title>
<link rel="stylesheet" href="/console/assets/console.css">
${(assets.styles ?? []).map((name) => html`<link rel="stylesheet" href="/console/assets/${name}">
`)}<link rel="icon" href="/console/assets/icon.svg" type="image/svg+xml">
<script type="module" src="/console/assets/console.js" nonce="${nonce}"></script>
${(assets.scripts ?? []).map((name) => html`<script type="module" src="/console/assets/${name}" nonce="${nonce}"></script>
`)}</head><body>
<header><a class="brand" href="/console">Developer console</a>${nav}</header>
<main><h1>${title}</h1>
${body}</main>
<footer><a href="/docs">API guide</a> · <a href="/docs/api">API reference</a> · <a href="/status">Status</a></footer>
</body></html>
`.text;
}

export interface Field {
  name: string;
  /** the input's id when a page has several fields of one name (default f-<name>) */
  id?: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'hidden' | 'search' | 'url';
  value?: string;
  error?: string;
  autocomplete?: string;
  /** a coin field: one slug, or slugs separated by commas; assets/coin-search.js makes it suggest coins as one types */
  coins?: 'one' | 'many';
}

/** A labelled input with its error beside it (GOV.UK style: the message is tied to the field). */
export function field({ name, id = `f-${name}`, label, type = 'text', value = '', error, autocomplete, coins }: Field): Html {
  return html`<div class="field${error ? ' invalid' : ''}"><label for="${id}">${label}</label>
${error ? html`<p class="error" id="${id}-error">Error: ${error}</p>` : ''}
<input id="${id}" name="${name}" type="${type}" value="${type === 'password' ? '' : value}"${autocomplete ? html` autocomplete="${autocomplete}"` : ''}${coins ? html` data-coin-search="${coins}" autocomplete="off" spellcheck="false"` : ''}${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}></div>`;
}

/** A labelled select of [value, label] options with its error beside it, as `field`. */
export function choice({ name, id = `f-${name}`, label, options, value, error }: { name: string; id?: string; label: string; options: readonly (readonly [string, string])[]; value?: string; error?: string }): Html {
  return html`<div class="field${error ? ' invalid' : ''}"><label for="${id}">${label}</label>
${error ? html`<p class="error" id="${id}-error">Error: ${error}</p>` : ''}
<select id="${id}" name="${name}"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>${options.map(([option, text]) => html`<option value="${option}"${option === value ? html` selected` : ''}>${text}</option>`)}</select></div>`;
}

/** A secret shown this once (a new API key, an endpoint's signing secret), with its copy button. */
export const shownOnce = ({ id, heading, secret, note }: { id: string; heading: string; secret: string; note?: string }) => html`<section class="notice" aria-labelledby="${id}"><h2 id="${id}">${heading}</h2>
<p>Copy it now: it is shown this once and cannot be shown again.${note ? ` ${note}` : ''}</p>
<p class="secret"><code id="${id}-value">${secret}</code> <button type="button" class="secondary" data-copy="${id}-value" hidden>Copy</button></p></section>`;

/** A form posting to the console with its CSRF token. */
export const form = (action: string, csrf: string, content: Html | Html[], button: string, className = '') =>
  html`<form method="post" action="${action}"${className ? html` class="${className}"` : ''}><input type="hidden" name="csrf" value="${csrf}">${content}<button type="submit">${button}</button></form>`;

export const notice = (text: string | Html, kind: 'info' | 'error' = 'info') =>
  html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
