// The discovery documents against their formats (APIs.json 0.18, RFC 9727/9264 linkset, RFC 9116),
// the changelog from CHANGELOG.md, the policy pages, and the deprecation headers of a route
// declared deprecated (RFC 9745 Deprecation, RFC 8594 Sunset, Link rel="deprecation").
import { readFileSync } from 'node:fs';
import test from 'ava';
import { z } from 'zod';
import { CHANGELOG_FILE, parseChangelog } from '../../src/changelog.ts';
import { defineRoute } from '../../src/http/routes.ts';
import { testApi, useApi } from '../helpers/http.ts';
import { fixtureRoutes } from './fixtures.ts';

const deprecatedRoute = defineRoute({
  method: 'get', path: '/fixtures/old', operationId: 'fixtureOld', tag: 'Fixtures', plan: 'free', query: z.object({}),
  summary: 'A deprecated operation.',
  deprecated: { sunset: '2027-06-01', changelog: 'unreleased-changed', since: '2026-11-23' },
  handler: async () => ({ data: { ok: true } }),
});
const handles = useApi(test, { routes: [...fixtureRoutes, deprecatedRoute] });

const HTTP_URL = /^https?:\/\/\S+$/;

test('apis.json: APIs.json 0.18 with its required fields, the Data API with its OpenAPI, the MCP server, docs, status, changelog', async (t) => {
  const response = await handles.api.get('/apis.json', null);
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type')!, /^application\/json/);
  const document = response.body;
  for (const field of ['name', 'description', 'image', 'url', 'specificationVersion', 'apis']) t.truthy(document[field], field);
  t.is(document.specificationVersion, '0.18');
  t.is(document.url, `${handles.api.base}/apis.json`);
  t.regex(document.created, /^\d{4}-\d{2}-\d{2}$/);
  t.true(document.maintainers.every((m: { name: string }) => m.name.length >= 5));
  for (const api of document.apis) {
    for (const field of ['name', 'description', 'image', 'baseURL', 'humanURL', 'properties']) t.truthy(api[field], `${api.name}: ${field}`);
    t.true(api.name.length >= 2 && api.description.length >= 5);
    t.regex(api.baseURL, HTTP_URL);
    t.regex(api.humanURL, HTTP_URL);
    for (const property of api.properties) {
      t.is(typeof property.type, 'string');
      t.regex(property.url, HTTP_URL);
    }
  }
  const [data, mcp] = document.apis;
  t.is(data.baseURL, `${handles.api.base}/api/v1`);
  const property = (api: { properties: { type: string; url: string }[] }, type: string) => api.properties.find((p) => p.type === type)?.url;
  t.is(property(data, 'OpenAPI'), `${handles.api.base}/api/v1/openapi.json`);
  t.is(property(data, 'Status'), `${handles.api.base}/status`);
  t.is(property(data, 'ChangeLog'), `${handles.api.base}/changelog`);
  t.is(property(data, 'Documentation'), `${handles.api.base}/docs`);
  t.is(mcp.baseURL, `${handles.api.base}/mcp`);
  t.is(property(mcp, 'x-mcp-server-card'), `${handles.api.base}/.well-known/mcp/server-card.json`);
  // the links that are this part's own answer
  for (const path of ['/docs', '/status', '/changelog', '/logo.svg']) t.is((await handles.api.get(path, null)).status, 200, path);
});

test('PUBLIC_URL makes every absolute link', async (t) => {
  const api = await testApi(handles.db, { env: { PUBLIC_URL: 'https://api.example.com/' } });
  try {
    const document = (await api.get('/apis.json', null)).body;
    t.is(document.url, 'https://api.example.com/apis.json');
    t.is(document.apis[0].baseURL, 'https://api.example.com/api/v1');
    const catalog = (await api.get('/.well-known/api-catalog', null)).body;
    t.is(catalog.linkset[0].anchor, 'https://api.example.com/api/v1');
    t.regex((await api.get('/.well-known/security.txt', null)).body, /^Canonical: https:\/\/api\.example\.com\/\.well-known\/security\.txt$/m);
  } finally {
    await api.close();
  }
});

test('api-catalog: an RFC 9264 linkset as application/linkset+json with the RFC 9727 profile; HEAD gives the Link', async (t) => {
  const response = await handles.api.get('/.well-known/api-catalog', null);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"');
  const { linkset, ...rest } = response.body;
  t.deepEqual(Object.keys(rest), [], 'a linkset document has the one member');
  t.true(Array.isArray(linkset) && linkset.length > 0);
  for (const context of linkset) {
    t.regex(context.anchor, HTTP_URL);
    for (const [relation, targets] of Object.entries(context)) {
      if (relation === 'anchor') continue;
      t.true(Array.isArray(targets), `${relation} is an array of target objects`);
      for (const target of targets as { href: string; type?: string }[]) t.regex(target.href, HTTP_URL);
    }
    for (const relation of ['service-desc', 'service-doc', 'status']) t.truthy(context[relation], relation);
  }
  const api = linkset.find((context: { anchor: string }) => context.anchor === `${handles.api.base}/api/v1`);
  t.deepEqual(api['service-desc'], [{ href: `${handles.api.base}/api/v1/openapi.json`, type: 'application/vnd.oai.openapi+json' }]);
  t.true(api.status.some((target: { href: string }) => target.href === `${handles.api.base}/status.json`));

  const head = await fetch(`${handles.api.base}/.well-known/api-catalog`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('link'), `<${handles.api.base}/.well-known/api-catalog>; rel="api-catalog"`);
  t.is(await head.text(), '');
});

test('security.txt: RFC 9116 fields, Expires in the future and under a year, configurable contact and expiry', async (t) => {
  const parse = (text: string) => {
    const fields: Record<string, string[]> = {};
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const match = /^([A-Za-z-]+): (.+)$/.exec(line);
      t.truthy(match, `a "Field: value" line: ${line}`);
      (fields[match![1]!.toLowerCase()] ??= []).push(match![2]!);
    }
    return fields;
  };
  const response = await handles.api.get('/.well-known/security.txt', null);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/plain; charset=utf-8');
  const fields = parse(response.body);
  t.true(fields.contact!.length >= 1);
  t.true(fields.contact!.every((uri) => /^(mailto|https|tel):/.test(uri)));
  t.is(fields.expires!.length, 1, 'Expires appears exactly once');
  t.regex(fields.expires![0]!, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  const expires = Date.parse(fields.expires![0]!);
  t.true(expires > Date.now());
  t.true(expires < Date.now() + 365 * 86_400_000);
  t.is(fields.canonical![0], `${handles.api.base}/.well-known/security.txt`);
  t.regex(fields.policy![0]!, /^http:\/\/127\.0\.0\.1:\d+\/versioning#security$/);
  const policy = await handles.api.get('/versioning', null);
  t.regex(policy.body, /<h2 id="security">Security<\/h2>/);

  const api = await testApi(handles.db, { env: { SECURITY_CONTACT: 'https://example.com/report', SECURITY_TXT_EXPIRES: '2030-01-02T03:04:05Z' } });
  try {
    const configured = parse((await api.get('/.well-known/security.txt', null)).body);
    t.deepEqual(configured.contact, ['https://example.com/report']);
    t.deepEqual(configured.expires, ['2030-01-02T03:04:05Z']);
  } finally {
    await api.close();
  }
});

test('changelog.json: the Keep a Changelog sections of CHANGELOG.md, newest first', async (t) => {
  const response = await handles.api.get('/changelog.json', null);
  t.is(response.status, 200);
  const versions = response.body.data as { version: string; date: string | null; anchor: string; groups: { name: string; anchor: string; items: string[] }[] }[];
  t.deepEqual(versions, parseChangelog(readFileSync(CHANGELOG_FILE, 'utf8')));
  t.like(versions[0], { version: 'Unreleased', date: null, anchor: 'unreleased' });
  const released = versions.filter((v) => v.date);
  t.true(released.some((v) => v.version === '0.1.0' && v.date === '2026-11-23'));
  const dates = released.map((v) => v.date!);
  t.deepEqual(dates, [...dates].sort().reverse(), 'newest first');
  for (const version of versions) {
    t.true(version.groups.length > 0, version.version);
    for (const group of version.groups) {
      t.true(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'].includes(group.name), group.name);
      t.true(group.items.length > 0);
      t.true(group.items.every((item) => item.length > 0 && !item.includes('\n')));
    }
  }
  // a continuation line joins its item
  const added = versions[0]!.groups.find((g) => g.name === 'Added')!;
  t.true(added.items.some((item) => item.startsWith('Real market data') && item.includes('`EXCHANGE_URLS` points a venue')));
});

test('parseChangelog: refuses a heading that is not Keep a Changelog', (t) => {
  t.throws(() => parseChangelog('# Changelog\n\n## 0.2.0\n'), { message: /line 3: expected "## \[version\] - YYYY-MM-DD"/ });
  t.deepEqual(parseChangelog('## [1.0.0] - 2027-01-02\n### Fixed\n- a\n  b\n- c\n'), [
    { version: '1.0.0', date: '2027-01-02', anchor: '1.0.0', groups: [{ name: 'Fixed', anchor: '1.0.0-fixed', items: ['a b', 'c'] }] },
  ]);
});

test('changelog, versioning and docs pages: HTML with the anchors deprecations link to', async (t) => {
  const changelog = await handles.api.get('/changelog', null);
  t.is(changelog.status, 200);
  t.regex(changelog.headers.get('content-type')!, /^text\/html/);
  t.regex(changelog.body, /<h2 id="unreleased">Unreleased<\/h2>/);
  t.regex(changelog.body, /<h3 id="unreleased-changed">Changed<\/h3>/);
  t.regex(changelog.body, /<h2 id="0\.1\.0">0\.1\.0 — 2026-11-23<\/h2>/);
  t.regex(changelog.body, /<code>EXCHANGE_URLS<\/code>/);
  const versioning = await handles.api.get('/versioning', null);
  t.is(versioning.status, 200);
  t.regex(versioning.body, /<h1 id="versioning-and-deprecation-policy">/);
  t.regex(versioning.body, /Sunset/);
  t.regex((await handles.api.get('/docs/status', null)).body, /<table>/);
  t.regex((await handles.api.get('/terms', null)).body, /<h1 id="terms-of-use">/);
});

test('a deprecated route: Deprecation, Sunset and Link to its changelog entry on every answer; OpenAPI marks it', async (t) => {
  const key = await handles.api.key();
  const response = await handles.api.get('/api/v1/fixtures/old', key);
  t.is(response.status, 200);
  t.is(response.headers.get('deprecation'), `@${Date.UTC(2026, 10, 23) / 1000}`);
  t.regex(response.headers.get('deprecation')!, /^@\d+$/, 'an RFC 9651 Date structured field');
  t.is(response.headers.get('sunset'), 'Tue, 01 Jun 2027 00:00:00 GMT');
  t.is(response.headers.get('link'), `<${handles.api.base}/changelog#unreleased-changed>; rel="deprecation"; type="text/html"`);
  const refused = await handles.api.get('/api/v1/fixtures/old', null);
  t.is(refused.status, 401);
  t.is(refused.headers.get('sunset'), 'Tue, 01 Jun 2027 00:00:00 GMT', 'errors carry it too');
  t.is(refused.body.error.code.length > 0, true);
  const current = await handles.api.get('/api/v1/ping', key);
  t.is(current.headers.get('deprecation'), null);
  t.is(current.headers.get('sunset'), null);

  const document = (await handles.api.get('/api/v1/openapi.json', key)).body;
  t.like(document.paths['/api/v1/fixtures/old'].get, { deprecated: true, 'x-sunset': '2027-06-01' });
  t.is(document.paths['/api/v1/ping'].get.deprecated, undefined);
});

test('a deprecation naming a changelog entry that does not exist, or a bad date, stops the app at start-up', async (t) => {
  const declare = (deprecated: { sunset: string; changelog: string; since?: string }) =>
    testApi(handles.db, { routes: [defineRoute({ ...deprecatedRoute, deprecated } as never)] });
  await t.throwsAsync(declare({ sunset: '2027-06-01', changelog: 'no-such-entry' }), { message: /no entry with the anchor "no-such-entry"/ });
  await t.throwsAsync(declare({ sunset: '1 June 2027', changelog: '0.1.0' }), { message: /deprecated.sunset: expected YYYY-MM-DD/ });
  await t.throwsAsync(declare({ sunset: '2027-06-01', changelog: 'unreleased' }), { message: /Unreleased has no release date yet/ });
  // a released version's date is the deprecation date when none is given
  const api = await declare({ sunset: '2027-06-01', changelog: '0.1.0-added' });
  try {
    const response = await api.get('/api/v1/fixtures/old', await api.key());
    t.is(response.headers.get('deprecation'), `@${Date.UTC(2026, 10, 23) / 1000}`);
  } finally {
    await api.close();
  }
});
