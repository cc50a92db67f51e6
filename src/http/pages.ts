// The few human-readable pages beside the API (/status, /changelog, /versioning, /docs): one page
// shell and a small Markdown subset for the repository's own documents — no client framework.
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { escapeHtml } from '../html.ts';

/**
 * The service's absolute base URL: PUBLIC_URL, else the request's scheme and host (behind a proxy
 * with TRUST_PROXY, its X-Forwarded-Proto/Host).
 */
export const publicBase = (ctx: Context, config: Pick<Config, 'PUBLIC_URL'>) => config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`;

// Narrow screens: long words, code and table cells wrap rather than widen the page.
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;overflow-wrap:break-word}
code{background:#f2f4f7;padding:0 .25em;border-radius:3px;overflow-wrap:anywhere}pre{background:#f2f4f7;padding:.75rem;overflow:auto}
pre code{overflow-wrap:normal}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left;vertical-align:top}.wide{overflow-x:auto}nav a{display:inline-block}@media (max-width:30rem){.components thead{display:none}.components tr{display:block;border:1px solid #d0d7de;margin-bottom:.5rem}.components th,.components td{display:block;border:none;overflow-wrap:anywhere}}
nav a{margin-right:1rem}.operational{color:#1a7f37}.busy{color:#0969da}.degraded{color:#9a6700}.outage{color:#cf222e}`;

/** The script a page that refreshes itself loads (same origin: the pages' CSP allows no other). */
export const REFRESH_SCRIPT_PATH = '/pages/refresh.js';
export const REFRESH_SCRIPT = readFileSync(new URL('./assets/refresh.js', import.meta.url), 'utf8');

const PAGE_LINKS = Symbol('page links');

/** The links an app's pages add to their navigation (the console's, when it is served). */
export function setPageLinks(app: { context: object }, links: [string, string][]) {
  (app.context as { [PAGE_LINKS]?: string })[PAGE_LINKS] = links.map(([href, label]) => `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`).join('');
}

/**
 * The page shell. `refreshSeconds`: the page reloads itself that often through REFRESH_SCRIPT, and
 * the body should hold `refreshControl()` where the reader can stop it.
 */
export function htmlPage(ctx: Context, title: string, body: string, options: { refreshSeconds?: number } = {}) {
  const refresh = options.refreshSeconds ? `<script type="module" src="${REFRESH_SCRIPT_PATH}"></script>` : '';
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}
<title>${escapeHtml(title)} · market-data-api</title><style>${STYLE}</style></head>
<body${options.refreshSeconds ? ` data-refresh="${options.refreshSeconds}"` : ''}><nav><a href="/status">Status</a><a href="/changelog">Changelog</a><a href="/versioning">Versioning</a><a href="/docs">Docs</a><a href="/docs/api">API reference</a>${(ctx as { [PAGE_LINKS]?: string })[PAGE_LINKS] ?? ''}</nav>
${body}
</body></html>
`;
}

/** The id a heading gets, and the anchor a deprecation links to (`## [0.2.0] - …` → `0.2.0`). */
export const slug = (text: string) =>
  text.toLowerCase().replace(/`/g, '').replace(/[^a-z0-9.]+/g, '-').replace(/^-+|-+$/g, '');

/** Inline Markdown: code spans (left alone), links, bold, emphasis; everything escaped. */
export function inline(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`') && part.endsWith('`') && part.length > 1
        ? `<code>${escapeHtml(part.slice(1, -1))}</code>`
        : escapeHtml(part)
            .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_, label: string, href: string) =>
              /^(https?:|\/|#|mailto:)/.test(href) ? `<a href="${href}">${label}</a>` : label)
            .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
            .replace(/(^|\W)_([^_]+)_(?=\W|$)/g, '$1<em>$2</em>'),
    )
    .join('');
}

/**
 * The Markdown of the repository's documents: headings (with ids), paragraphs, bullet and numbered
 * lists with continuation lines, fenced code and pipe tables. Not a general Markdown renderer.
 */
export function markdownToHtml(markdown: string, headingId: (text: string, level: number) => string = (text) => slug(text)): string {
  const lines = markdown.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (/^```/.test(line)) {
      const code: string[] = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]!); i++) code.push(lines[i]!);
      i++;
      // a block wider than the screen scrolls: focusable, so that a keyboard can scroll it too
      out.push(`<pre tabindex="0"><code>${escapeHtml(code.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(`<h${level} id="${escapeHtml(headingId(heading[2]!, level))}">${inline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*\|/.test(line)) {
      const rows: string[][] = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]!); i++) {
        const cells = lines[i]!.trim().replace(/^\||\|$/g, '').split('|').map((cell) => cell.trim());
        if (!cells.every((cell) => /^:?-+:?$/.test(cell))) rows.push(cells);
      }
      const [head, ...body] = rows;
      // wider than a phone: the table scrolls in a box of its own, which a keyboard can focus and scroll
      out.push(`<div class="wide" tabindex="0" role="region" aria-label="table"><table><thead><tr>${head!.map((cell) => `<th>${inline(cell)}</th>`).join('')}</tr></thead><tbody>${body
        .map((row) => `<tr>${row.map((cell) => `<td>${inline(cell)}</td>`).join('')}</tr>`).join('')}</tbody></table></div>`);
      continue;
    }
    const item = /^(\s*)([-*]|\d+\.)\s+(.*)$/;
    if (/^([-*]|\d+\.)\s/.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const current = lines[i]!;
        const match = item.exec(current);
        if (match && match[1]!.length === 0) items.push(match[3]!);
        else if (current.trim() && /^\s/.test(current) && items.length) items[items.length - 1] += ` ${current.trim()}`;
        else break;
      }
      const tag = ordered ? 'ol' : 'ul';
      out.push(`<${tag}>${items.map((text) => `<li>${inline(text)}</li>`).join('')}</${tag}>`);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const paragraph: string[] = [line.trim()];
    for (i++; i < lines.length && lines[i]!.trim() && !/^(#{1,6}\s|```|\s*\||\s*([-*]|\d+\.)\s)/.test(lines[i]!); i++) paragraph.push(lines[i]!.trim());
    out.push(`<p>${inline(paragraph.join(' '))}</p>`);
  }
  return out.join('\n');
}

/** Where a self-refreshing page says so, with the button (shown by the script) that stops it. */
export const refreshControl = (seconds: number) =>
  `<span id="refresh-note">this page refreshes every ${seconds} seconds</span> <button id="refresh-toggle" type="button" hidden>Stop refreshing</button>`;
