// The repository's documents served as pages: the API user's guide at /docs, the versioning policy at
// /versioning, the status page's thresholds, the indicators, sentiment and the terms of use.
import { readFileSync } from 'node:fs';
import type { Context } from 'koa';
import type { Html } from '../html.ts';
import { markdownToHtml } from './markdown.ts';
import type { WritePage } from './shell.ts';

const ROOT = new URL('../../', import.meta.url);
/** The documents served, by path (read once: they ship with the code); /docs is the API user's. */
export const DOCUMENTS: Record<string, { file: string; title: string }> = {
  '/docs': { file: 'docs/api.md', title: 'Using the API' },
  '/versioning': { file: 'docs/versioning.md', title: 'Versioning and deprecation policy' },
  '/docs/status': { file: 'docs/status.md', title: 'Status page' },
  '/docs/indicators': { file: 'docs/indicators.md', title: 'Technical indicators' },
  '/docs/sentiment': { file: 'docs/sentiment.md', title: 'Sentiment' },
  '/terms': { file: 'docs/terms.md', title: 'Terms of use' },
};

const PATH_OF_FILE = new Map(Object.entries(DOCUMENTS).map(([path, { file }]) => [file, path]));

/**
 * Where a link of a served document leads once served: a link to another served document by its
 * file (`indicators.md`, as it works in the repository) becomes that document's path; any other
 * link is kept as written (the renderer makes links only of absolute URLs, paths and anchors).
 */
export function servedHref(file: string, href: string): string {
  if (/^([a-z]+:|\/|#)/.test(href)) return href;
  const [target, anchor] = href.split('#') as [string, string | undefined];
  const resolved = new URL(target, new URL(file, 'file:///')).pathname.slice(1);
  const path = PATH_OF_FILE.get(resolved);
  return path ? `${path}${anchor ? `#${anchor}` : ''}` : href;
}

/** The page of a document, rendered once (on its first request). */
export function documentPage(file: string, title: string, page: WritePage) {
  let markup: Html | undefined;
  return async (ctx: Context) => {
    markup ??= markdownToHtml(readFileSync(new URL(file, ROOT), 'utf8')
      .replace(/\]\(([^)\s]+)\)/g, (_, href: string) => `](${servedHref(file, href)})`));
    page(ctx, title, markup);
  };
}
