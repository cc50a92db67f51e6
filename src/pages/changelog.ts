// GET /changelog (HTML) and GET /changelog.json: the service's own CHANGELOG.md (src/changelog.ts), each
// version and group under the anchor deprecations link to.
import type { Context } from 'koa';
import { changelog, type ChangelogVersion } from '../changelog.ts';
import { type Html, html, joinHtml } from '../html.ts';
import { inline } from './markdown.ts';
import type { WritePage } from './shell.ts';

export async function changelogJson(ctx: Context) {
  ctx.body = { data: changelog(), meta: { format: 'https://keepachangelog.com/en/1.1.0/', newest_first: true } };
}

/** The versions as sections, each version and group heading with its anchor as id. */
export function changelogMarkup(versions: ChangelogVersion[]): Html {
  return joinHtml(versions.map((version) => {
    const title = version.date ? `${version.version} — ${version.date}` : version.version;
    const groups = version.groups.map((group) =>
      html`<h3 id="${group.anchor}">${group.name}</h3>\n<ul>${joinHtml(group.items.map((item) => html`<li>${inline(item)}</li>`), '\n')}</ul>`);
    return html`<section><h2 id="${version.anchor}">${title}</h2>\n${joinHtml(groups, '\n')}</section>`;
  }), '\n');
}

export function changelogHtml(page: WritePage) {
  return async (ctx: Context) => {
    page(ctx, 'Changelog', html`<h1>Changelog</h1>\n<p>Newest first; also as <a href="/changelog.json">JSON</a>. Deprecations follow the <a href="/versioning">versioning policy</a>.</p>\n${changelogMarkup(changelog())}`);
  };
}
