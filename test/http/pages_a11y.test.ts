// Every public page a person reads, in Debian's Chromium: axe-core finds no serious or critical
// violation, and at 375 px nothing but a wide table or code block scrolls sideways (the page itself
// does not). Screenshots of each, at both widths, are written for the record.
import test from 'ava';
import { chromium, type Browser } from 'playwright-core';
import { DOCUMENTS } from '../../src/pages/documents.ts';
import { browserTest, CHROMIUM, graveViolations, screenshots } from '../helpers/browser.ts';
import { useApi } from '../helpers/http.ts';

const handles = useApi(test);
const PAGES = ['/status', '/changelog', '/docs/api', ...Object.keys(DOCUMENTS)];

let browser: Browser | undefined;
// what the window shows at each width, not the whole page
const shot = screenshots('pages', { fullPage: false });
test.after.always(async () => {
  await browser?.close();
});

for (const path of PAGES) {
  browserTest(`${path}: no serious or critical axe-core violation, readable at 375 px, screenshots`, async (t) => {
    browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    for (const width of [1280, 375]) {
      // axe-core's runner needs a page of a context of its own
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      const response = await page.goto(`${handles.api.base}${path}`);
      t.is(response?.status(), 200, path);
      t.deepEqual(await graveViolations(page, { tags: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'], nodes: 3 }), [], `${path} at ${width} px`);
      if (width === 375) {
        // the page is not wider than the screen; wide code blocks scroll inside their own box
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        t.true(overflow <= 1, `${path} is ${overflow} px wider than 375 px`);
      }
      await shot(t, page, `${path.replace(/\W+/g, '_').replace(/^_/, '')}-${width}.png`);
      await context.close();
    }
  });
}
