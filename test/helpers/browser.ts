// Debian's chromium for the browser tests (driven by playwright-core). Where it is not installed,
// a browser test is skipped and its title says why.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export const browserTest = existsSync(CHROMIUM)
  ? test.serial
  : (((title: string, ...rest: unknown[]) =>
    (test.skip as (title: string, ...rest: unknown[]) => void)(`${title} [skipped: no ${CHROMIUM}; apt-get install chromium]`, ...rest)) as unknown as typeof test.serial);

/**
 * The serious and critical axe-core violations of the page as it is now, each with (up to `nodes`
 * of) the elements it names. axe.run inside the page (legacy mode) returning only the violations in
 * full: the default runPartial path ships every passing node of every rule back to Node and through
 * a blank page, minutes on a page as large as the API reference. Legacy mode reaches same-origin
 * frames only: a page embedding another origin asks for `crossOrigin`.
 */
export async function graveViolations(page: Page, options: { tags?: string[]; crossOrigin?: boolean; nodes?: number } = {}): Promise<string[]> {
  let builder = new AxeBuilder({ page });
  if (!options.crossOrigin) builder = builder.options({ resultTypes: ['violations'] }).setLegacyMode(true);
  if (options.tags) builder = builder.withTags(options.tags);
  const { violations } = await builder.analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, options.nodes).join(', ')}`);
}

/** What every console page must pass: axe-core finds no serious or critical violation, and nothing scrolls sideways. */
export async function checkPage(t: ExecutionContext, page: Page, name: string) {
  t.deepEqual(await graveViolations(page), [], `${name}: axe`);
  const { scrollWidth, innerWidth, widest } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    // the elements reaching past the window, or whose own text does, to name in the failure
    widest: [...document.body.querySelectorAll('*')].filter((e) => e.getBoundingClientRect().right > window.innerWidth || (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'visible'))
      .slice(0, 3).map((e) => `<${e.tagName.toLowerCase()}${e.className ? ` class="${e.className}"` : ''}> ${Math.round(e.getBoundingClientRect().right)} px: ${e.textContent?.slice(0, 60)}`),
  }));
  t.true(scrollWidth <= innerWidth, `${name}: ${scrollWidth} px wide in a ${innerWidth} px window; ${widest.join('; ')}`);
}

/**
 * A directory of screenshots (`mdapi-<prefix>-…`, made at the first one), and what writes one into
 * it: the page as it is now, whole (`fullPage: false`: the window only), checked to be there and its
 * path logged for the closing note; `numbered`: each name led by its place in the order taken (`01-<name>`).
 */
export function screenshots(prefix: string, options: { numbered?: boolean; fullPage?: boolean } = {}) {
  let directory: string | undefined;
  let taken = 0;
  return async (t: ExecutionContext, page: Page, name: string): Promise<string> => {
    directory ??= mkdtempSync(join(tmpdir(), `mdapi-${prefix}-`));
    const path = join(directory, options.numbered ? `${String(++taken).padStart(2, '0')}-${name}` : name);
    await page.screenshot({ path, fullPage: options.fullPage ?? true });
    t.true(existsSync(path));
    t.log(`screenshot: ${path}`);
    return path;
  };
}

/** A full-page screenshot in a directory of its own (`mdapi-<prefix>-…`), its path logged for the closing note. */
export function screenshot(t: ExecutionContext, page: Page, prefix: string, name: string): Promise<string> {
  return screenshots(prefix)(t, page, name);
}
