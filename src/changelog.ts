// CHANGELOG.md (Keep a Changelog: `## [version] - YYYY-MM-DD`, `### Added` …, `- item` lines) parsed
// once: the sections /changelog shows (src/pages/changelog.ts), the anchors deprecations link to
// (src/http/deprecation.ts) and the release date of the discovery documents.
import { readFileSync } from 'node:fs';
import { headingId } from './html.ts';

export interface ChangelogVersion {
  version: string;
  /** YYYY-MM-DD; null for Unreleased */
  date: string | null;
  /** the HTML anchor of the version's section on /changelog; a group's is `<anchor>-<group>` */
  anchor: string;
  groups: { name: string; anchor: string; items: string[] }[];
}

export const CHANGELOG_FILE = new URL('../CHANGELOG.md', import.meta.url);

const VERSION_HEADING = /^## \[([^\]]+)\](?:\s+-\s+(\d{4}-\d{2}-\d{2}))?\s*$/;

/** Sections in file order, which Keep a Changelog keeps newest first. Throws on a malformed heading. */
export function parseChangelog(markdown: string): ChangelogVersion[] {
  const versions: ChangelogVersion[] = [];
  let group: ChangelogVersion['groups'][number] | undefined;
  for (const [index, line] of markdown.replace(/\r\n/g, '\n').split('\n').entries()) {
    if (line.startsWith('## ')) {
      const match = VERSION_HEADING.exec(line);
      if (!match) throw new Error(`CHANGELOG.md line ${index + 1}: expected "## [version] - YYYY-MM-DD" or "## [Unreleased]"`);
      versions.push({ version: match[1]!, date: match[2] ?? null, anchor: headingId(match[1]!), groups: [] });
      group = undefined;
    } else if (line.startsWith('### ')) {
      const version = versions.at(-1);
      if (!version) throw new Error(`CHANGELOG.md line ${index + 1}: a group before any version`);
      const name = line.slice(4).trim();
      group = { name, anchor: `${version.anchor}-${headingId(name)}`, items: [] };
      version.groups.push(group);
    } else if (/^[-*]\s/.test(line) && group) {
      group.items.push(line.slice(2).trim());
    } else if (/^\s+\S/.test(line) && group?.items.length) {
      group.items[group.items.length - 1] += ` ${line.trim()}`;
    }
  }
  return versions;
}

let cached: ChangelogVersion[] | undefined;
/** The service's own changelog (read once: it ships with the code). */
export const changelog = () => (cached ??= parseChangelog(readFileSync(CHANGELOG_FILE, 'utf8')));

/** The version section an anchor (a version's or a group's) belongs to, if any. */
export const changelogSection = (anchor: string) =>
  changelog().find((version) => version.anchor === anchor || version.groups.some((group) => group.anchor === anchor));
