// Curated content for the Wallets, Editorial and import tests: small content files written to a
// temporary directory and imported through `importContent`, the path `mdapi import-content` takes.
// Coins are those of test/api/fixtures.ts (alpha 101, beta 102, gamma 103, delta 104 delisted,
// epsilon 105 preparing, mu 112).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SOURCE = { name: 'content-test', demo: false, description: 'Content test fixture' };

export const CATEGORIES = [
  { slug: 'type', name: 'Type', tags: [{ slug: 'hardware', name: 'Hardware' }, { slug: 'mobile', name: 'Mobile' }, { slug: 'browser-extension', name: 'Browser extension' }, { slug: 'desktop', name: 'Desktop' }] },
  { slug: 'custody', name: 'Custody', tags: [{ slug: 'non-custodial', name: 'Non-custodial' }, { slug: 'custodial', name: 'Custodial' }] },
  { slug: 'features', name: 'Features', tags: [{ slug: 'staking', name: 'Staking' }, { slug: 'swap', name: 'Swap' }] },
  { slug: 'unused', name: 'Unused', tags: [{ slug: 'lightning', name: 'Lightning' }] },
];

export const WALLETS = [
  { slug: 'vault-one', name: 'Vault One', score: 90, price_model: 'paid', released_at: '2019-05-01', description: 'A hardware wallet.',
    pros: ['Secure element', 'Bluetooth', 'Many coins'], cons: ['Closed firmware'], logo: 'https://example.com/v1.png', website: 'https://vault.example.com',
    tags: ['hardware', 'non-custodial', 'staking'], coins: ['alpha', 'beta', 'gamma', 'epsilon', 'not-a-coin-yet'] },
  { slug: 'pocket', name: 'Pocket', score: 75.5, price_model: 'free', released_at: '2021-03-10', pros: ['Simple', 'Free'], cons: ['Mobile only', 'No hardware support'],
    tags: ['mobile', 'non-custodial', 'swap'], coins: ['alpha', 'beta'] },
  { slug: 'browser-x', name: 'Browser X', score: 82, price_model: 'freemium', released_at: '2016-07-14', pros: ['dApps', 'Snaps', 'Hardware support', 'Popular'], cons: [],
    tags: ['browser-extension', 'non-custodial', 'swap', 'staking'], coins: ['alpha'] },
  { slug: 'old-desk', name: 'Old Desk', status: 'DISCONTINUED', score: 60, price_model: 'free', pros: ['Was first'], cons: ['Unmaintained', 'Custodial', 'Slow'],
    tags: ['desktop', 'custodial'] },
  { slug: 'cold-card', name: 'Cold Card', score: 88, price_model: 'paid', released_at: '2023-10-17', pros: ['Air-gapped', 'Open source'], cons: ['Pricey', 'Small screen'],
    tags: ['hardware', 'non-custodial'], coins: ['alpha', 'delta'] },
  { slug: 'secret-draft', name: 'Secret Draft', status: 'DRAFT', score: 99, price_model: 'free', tags: ['mobile'], coins: ['alpha'] },
];
/** The published wallets' supported coins in a public listing status (active, delisted, untracked) */
export const PUBLIC_ASSETS: Record<string, string[]> = {
  'vault-one': ['alpha', 'beta', 'gamma'], pocket: ['alpha', 'beta'], 'browser-x': ['alpha'], 'old-desk': [], 'cold-card': ['alpha', 'delta'],
};

const en = (title: string, subtitle: string | undefined, words: number) => ({
  title, ...(subtitle ? { subtitle } : {}), body: `<h2>${title}</h2><p>${Array.from({ length: words }, (_, i) => `word${i}`).join(' ')}</p>`,
});

export const ARTICLES = [
  { slug: 'alpha-guide', tags: ['guide', 'tutorial'], hero_image: 'https://example.com/a.jpg', published_at: '2026-01-10T09:00:00Z', updated_at: '2026-01-12T10:30:00Z',
    translations: { en: en('Alpha guide', 'All about alpha', 450), de: { title: 'Alpha-Leitfaden', body: '<p>Auf Deutsch.</p>' } },
    coins: ['alpha'], wallets: ['vault-one', 'pocket'] },
  { slug: 'beta-news', tags: ['news'], published_at: '2026-02-01T08:00:00Z',
    translations: { en: en('Beta news', 'Beta moves', 100), de: { title: 'Beta-Nachrichten', subtitle: 'Beta bewegt sich', body: '<p>Deutsch</p>' }, es: { title: 'Noticias de beta' } },
    coins: ['beta'], exchanges: ['big-cex'] },
  { slug: 'exchange-review', tags: ['review', 'analysis'], published_at: '2026-03-05T12:00:00Z',
    translations: { en: en('Exchange review', undefined, 900) }, exchanges: ['big-cex', 'amm-dex'] },
  { slug: 'wallet-roundup', tags: ['review'], published_at: '2025-12-24T18:00:00Z',
    translations: { en: en('Wallet roundup', 'Five wallets compared', 250), 'pt-BR': { subtitle: 'Cinco carteiras' }, pt: { title: 'Resumo de carteiras' } },
    wallets: ['vault-one', 'cold-card', 'secret-draft'] },
  { slug: 'draft-article', status: 'DRAFT', tags: ['news'], published_at: '2026-01-01T00:00:00Z', translations: { en: en('Draft', undefined, 10) }, coins: ['alpha'] },
  { slug: 'archived-article', status: 'ARCHIVED', tags: ['news'], published_at: '2026-01-02T00:00:00Z', translations: { en: en('Archived', undefined, 10) }, coins: ['alpha'] },
  { slug: 'scheduled-article', tags: ['news'], published_at: '2099-01-01T00:00:00Z', translations: { en: en('From the future', undefined, 10) }, coins: ['alpha'] },
];
/** published articles, newest first */
export const PUBLISHED_ARTICLES = ['exchange-review', 'beta-news', 'alpha-guide', 'wallet-roundup'];

export const VIDEOS = [
  { id: 11, type: 'tutorial', title: 'Alpha setup', description: 'Set up alpha step by step', url: 'https://video.example.com/11', duration_seconds: 600, channel: 'Academy', published_at: '2026-01-05T10:00:00Z', coins: ['alpha'], wallets: ['vault-one'] },
  { id: 12, type: 'news', title: 'Alpha and beta news', url: 'https://video.example.com/12', published_at: '2026-02-05T10:00:00Z', coins: ['alpha', 'beta'] },
  { id: 13, type: 'review', title: 'Exchange tour', url: 'https://video.example.com/13', published_at: '2026-03-05T10:00:00Z', exchanges: ['big-cex'] },
  { id: 14, status: 'DRAFT', type: 'news', title: 'Draft video', url: 'https://video.example.com/14', published_at: '2026-01-01T10:00:00Z', coins: ['alpha'] },
];

export const INSIGHTS = [
  { id: 21, type: 'per_asset', sentiment: 'bullish', first_reported_at: '2026-01-01T06:00:00Z', last_updated_at: '2026-03-01T06:00:00Z',
    translations: { en: { title: 'Alpha breaks out', summary: 'Alpha above resistance', body: '<p>Body</p>' }, de: { title: 'Alpha bricht aus' } }, coins: ['alpha'] },
  { id: 22, type: 'market_overview', sentiment: 'neutral', first_reported_at: '2026-02-01T06:00:00Z',
    translations: { en: { title: 'Market steady', summary: 'Nothing moves' } } },
  { id: 23, type: 'per_asset', sentiment: 'bearish', first_reported_at: '2026-01-15T06:00:00Z', last_updated_at: '2026-01-20T06:00:00Z',
    translations: { en: { title: 'Alpha and beta diverge' }, de: { title: 'Alpha und Beta laufen auseinander', summary: 'Nur auf Deutsch' } }, coins: ['alpha', 'beta'] },
  { id: 24, status: 'ARCHIVED', type: 'narrative', first_reported_at: '2026-01-03T06:00:00Z', translations: { en: { title: 'Archived' } }, coins: ['alpha'] },
];

export interface ContentFiles {
  wallets?: unknown;
  articles?: unknown;
  videos?: unknown;
  insights?: unknown;
}

export const fixtureFiles = (): ContentFiles => ({
  wallets: { version: 1, source: SOURCE, categories: CATEGORIES, wallets: WALLETS },
  articles: { version: 1, source: SOURCE, articles: ARTICLES },
  videos: { version: 1, source: SOURCE, videos: VIDEOS },
  insights: { version: 1, source: SOURCE, insights: INSIGHTS },
});

/** Writes the files (JSON values, or raw text) into a new temporary directory and returns it. */
export function writeContentDir(files: ContentFiles | Record<string, unknown> = fixtureFiles()): string {
  const dir = mkdtempSync(join(tmpdir(), 'mdapi-content-'));
  for (const [kind, value] of Object.entries(files)) {
    if (value === undefined) continue;
    writeFileSync(join(dir, `${kind}.json`), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  }
  return dir;
}
