// The page shell of the human-readable pages beside the API (/status, /changelog, the documents):
// one layout and its navigation, and the script of a page that refreshes itself — no client framework.
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import { Html, html } from '../html.ts';

// Narrow screens: long words, code and table cells wrap rather than widen the page.
const STYLE = new Html(`body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;overflow-wrap:break-word}
code{background:#f2f4f7;padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}pre{background:#f2f4f7;padding:.75rem;overflow:auto}
pre code{overflow-wrap:normal}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}.wide{overflow-x:auto}nav a{display:inline-block}@media (max-width:30rem){.components thead{display:none}.components tr{display:block;border:1px solid #d0d7de;margin-bottom:.5rem}.components th,.components td{display:block;border:none;overflow-wrap:anywhere}}
nav a{margin-right:1rem}.operational{color:#1a7f37}.busy{color:#0969da}.degraded{color:#9a6700}.outage{color:#cf222e}`);

/** The script a page that refreshes itself loads (same origin: the pages' CSP allows no other). */
export const REFRESH_SCRIPT_PATH = '/pages/refresh.js';
export const REFRESH_SCRIPT = readFileSync(new URL('./assets/refresh.js', import.meta.url), 'utf8');

/**
 * Writes a page into the response. `refreshSeconds`: the page reloads itself that often through
 * REFRESH_SCRIPT, and the body should hold `refreshControl()` where the reader can stop it.
 */
export type WritePage = (ctx: Context, title: string, body: Html, options?: { refreshSeconds?: number }) => void;

/** The page shell, its navigation ending with `links` ([path, label]: the console's, when it is served). */
export function pageShell(links: [string, string][]): WritePage {
  const added = links.map(([href, label]) => html`<a href="${href}">${label}</a>`);
  return (ctx, title, body, { refreshSeconds } = {}) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refreshSeconds ? html`<script type="module" src="${REFRESH_SCRIPT_PATH}"></script>` : ''}
<title>${title} · market-data-api</title><style>${STYLE}</style></head>
<body${refreshSeconds ? html` data-refresh="${refreshSeconds}"` : ''}><nav><a href="/status">Status</a><a href="/changelog">Changelog</a><a href="/versioning">Versioning</a><a href="/docs">Docs</a><a href="/docs/api">API reference</a>${added}</nav>
${body}
</body></html>
`.text;
  };
}

/** Where a self-refreshing page says so, with the button (shown by the script) that stops it. */
export const refreshControl = (seconds: number) =>
  html`<span id="refresh-note">this page refreshes every ${seconds} seconds</span> <button id="refresh-toggle" type="button" hidden>Stop refreshing</button>`;
