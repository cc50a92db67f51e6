// The documents the service serves (/docs — the API user's guide, docs/api.md —, its neighbours and
// the changelog): every link in them leads to something the service serves, and none to a file of
// the repository that it does not.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { CHANGELOG_FILE } from '../../src/changelog.ts';
import { DOCUMENTS, servedHref } from '../../src/pages/documents.ts';
import { useApi } from '../helpers/http.ts';

const handles = useApi(test);

const ROOT = new URL('../../', import.meta.url);
const SERVED = { ...Object.fromEntries(Object.entries(DOCUMENTS).map(([path, { file }]) => [path, new URL(file, ROOT)])), '/changelog': CHANGELOG_FILE };

/** The Markdown links of a document: outside fenced code and code spans, as the page renderer reads them. */
const markdownLinks = (markdown: string) =>
  markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '').match(/\[[^\]]+\]\([^)\s]+\)/g)?.map((link) => link.replace(/^.*\(|\)$/g, '')) ?? [];

/** The links of a page's content (the navigation bar every page shares is checked once, on /docs). */
const pageLinks = (html: string) => [...html.replace(/<nav>[\s\S]*?<\/nav>/, '').matchAll(/<a href="([^"]+)"/g)].map((match) => match[1]!);

test('/docs is the guide for API users, docs/api.md, not the README', async (t) => {
  const page = await handles.api.get('/docs', null);
  t.is(page.status, 200);
  t.regex(page.body, /<title>Using the API · market-data-api<\/title>/);
  t.regex(page.body, /<h1 id="[^"]+">/);
  t.notRegex(page.body, /make start/, 'nothing about running the service');
  t.is(DOCUMENTS['/docs']!.file, 'docs/api.md');
});

test('every link of a served document resolves to something the service serves, none leaves it', async (t) => {
  const key = await handles.api.key({ plan: 'pro' });
  const pages = new Map<string, string>();
  const page = async (path: string) => {
    if (!pages.has(path)) pages.set(path, (await handles.api.get(path, null)).body as string);
    return pages.get(path)!;
  };
  const problems: string[] = [];
  let checked = 0;
  for (const [path, file] of Object.entries(SERVED)) {
    const markdown = readFileSync(file, 'utf8');
    const sourceLinks = markdownLinks(markdown);
    // every link of the source is one the page renders as a link: none is dropped for pointing
    // outside (../shared/…, README.md, a source file)
    for (const href of sourceLinks) {
      const served = path === '/changelog' ? href : servedHref(file.pathname.slice(ROOT.pathname.length), href);
      if (!/^(https?:|mailto:|\/|#)/.test(served)) problems.push(`${path}: ${href} is not a page the service serves`);
    }
    const html = await page(path);
    const hrefs = pageLinks(html);
    if (hrefs.length < sourceLinks.length) problems.push(`${path}: ${sourceLinks.length} links in the source, ${hrefs.length} on the page`);
    const navigation = path === '/docs' ? [.../<nav>([\s\S]*?)<\/nav>/.exec(html)![1]!.matchAll(/href="([^"]+)"/g)].map((match) => match[1]!) : [];
    for (const href of [...hrefs, ...navigation]) {
      if (/^(https?:|mailto:)/.test(href)) continue;
      checked++;
      const [target, anchor] = href.split('#') as [string, string | undefined];
      if (!target.startsWith('/') && target !== '') {
        problems.push(`${path}: ${href} is relative to the page`);
        continue;
      }
      const targetPath = target || path;
      if (targetPath.startsWith('/api/v1/') || targetPath === '/mcp') {
        const status = (await handles.api.get(targetPath, key)).status;
        if (status === 404 || status >= 500) problems.push(`${path}: ${href} answers ${status}`);
        continue;
      }
      const response = await handles.api.get(targetPath, null);
      if (response.status !== 200) problems.push(`${path}: ${href} answers ${response.status}`);
      else if (anchor && !String(response.body).includes(` id="${anchor}"`)) problems.push(`${path}: ${href} has no such anchor`);
    }
  }
  t.deepEqual(problems, []);
  t.true(checked >= 10, `${checked} links checked`);
});

test('a link to another served document by its file becomes its path; others are kept', (t) => {
  t.is(servedHref('docs/sentiment.md', 'indicators.md#rsi'), '/docs/indicators#rsi');
  t.is(servedHref('docs/api.md', 'versioning.md'), '/versioning');
  t.is(servedHref('docs/api.md', '../shared/spec.md'), '../shared/spec.md');
  t.is(servedHref('docs/api.md', '/status'), '/status');
  t.is(servedHref('docs/api.md', 'https://example.com/x.md'), 'https://example.com/x.md');
});
