// The headers of a deprecated operation (docs/versioning.md): Deprecation (RFC 9745, a structured
// date `@<unix seconds>`), Sunset (RFC 8594, an HTTP-date) and Link rel="deprecation" to the
// changelog entry that announced it.
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { changelogSection } from '../changelog.ts';
import { publicBase } from './base.ts';
import { appendHeader, setHeaders } from './head.ts';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function parseDate(value: string, what: string) {
  const time = DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(time)) throw new Error(`deprecated.${what}: expected YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return time;
}

export function deprecationHeaders(deprecated: { sunset: string; changelog: string; since?: string }) {
  const section = changelogSection(deprecated.changelog);
  if (!section) throw new Error(`deprecated.changelog: CHANGELOG.md has no entry with the anchor ${JSON.stringify(deprecated.changelog)}`);
  const since = deprecated.since ?? section.date;
  if (!since) throw new Error(`deprecated.since: ${section.version} has no release date yet; give the date the deprecation takes effect`);
  const deprecation = `@${parseDate(since, 'since') / 1000}`;
  const sunset = new Date(parseDate(deprecated.sunset, 'sunset')).toUTCString();
  return (ctx: Context, config: Pick<Config, 'PUBLIC_URL'>) => {
    setHeaders(ctx, ['Deprecation', deprecation, 'Sunset', sunset]);
    appendHeader(ctx, 'Link', `<${publicBase(ctx, config)}/changelog#${encodeURIComponent(deprecated.changelog)}>; rel="deprecation"; type="text/html"`);
  };
}
