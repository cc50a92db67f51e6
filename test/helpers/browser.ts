// Debian's chromium for the browser tests (driven by playwright-core). Where it is not installed,
// a browser test is skipped and its title says why.
import { existsSync } from 'node:fs';
import test from 'ava';

export const CHROMIUM = '/usr/bin/chromium';

export const browserTest = existsSync(CHROMIUM)
  ? test.serial
  : (((title: string, ...rest: unknown[]) =>
    (test.skip as (title: string, ...rest: unknown[]) => void)(`${title} [skipped: no ${CHROMIUM}; apt-get install chromium]`, ...rest)) as unknown as typeof test.serial);
