// A browser stand-in for the console's HTTP tests: a cookie jar, forms posted with the CSRF token
// of the last page, redirects not followed (the tests look at them).
import { createECDH, randomBytes } from 'node:crypto';
import { createAccount } from '../../src/console/accounts.ts';
import type { Sql } from '../../src/db/client.ts';

export interface ConsolePage {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export class ConsoleClient {
  readonly jar = new Map<string, string>();
  csrf: string | null = null;
  readonly base: string;
  readonly userAgent: string;

  constructor(base: string, userAgent = 'console-test') {
    this.base = base;
    this.userAgent = userAgent;
  }

  async request(method: string, path: string, form?: Record<string, string>): Promise<ConsolePage> {
    const headers: Record<string, string> = { 'user-agent': this.userAgent };
    if (this.jar.size) headers.cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const response = await fetch(`${this.base}${path}`, { method, headers, redirect: 'manual', body: form ? new URLSearchParams(form).toString() : undefined });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(';');
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)];
      if (value === '' || attributes.some((a) => a.trim() === 'Max-Age=0')) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    const text = await response.text();
    this.csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? this.csrf;
    return { status: response.status, headers: response.headers, text, location: response.headers.get('location') };
  }

  get = (path: string) => this.request('GET', path);
  /** Posts a form with the CSRF token of the last page (unless the form names its own). */
  post = (path: string, form: Record<string, string> = {}) => this.request('POST', path, { csrf: this.csrf ?? '', ...form });

  /** Sets the password through the set-password link and is then signed in. */
  async setPassword(linkPath: string, password: string) {
    await this.get(linkPath);
    const token = new URL(linkPath, this.base).searchParams.get('token')!;
    return this.post('/console/reset/set', { token, password });
  }

  async signIn(email: string, password: string, next = '') {
    await this.get('/console/sign-in');
    return this.post('/console/sign-in', { email, password, next });
  }
}

export const PASSWORD = 'correct horse battery staple';

/** An account made as the operator makes one (an admin with `admin`), signed in by a client with PASSWORD. */
export async function signedInAccount(sql: Sql, base: string, email: string, userAgent?: string, admin = false) {
  const { owner, path } = await sql.begin((tx) => createAccount(tx as unknown as Sql, { email, admin }));
  const client = new ConsoleClient(base, userAgent);
  const page = await client.setPassword(path, PASSWORD);
  if (page.status !== 302) throw new Error(`setting the password answered ${page.status}: ${page.text.slice(0, 500)}`);
  return { owner, client };
}

/** The key shown once on the page after creating it. */
export const shownKey = (text: string) => /id="new-key-value">(mdk_[\w-]+)</.exec(text)?.[1] ?? null;

export interface FoundForm {
  method: 'GET' | 'POST';
  path: string;
  /** each field's first value, made plausible for its input type when empty (an address for type=email) */
  fields: Map<string, string>;
  client: ConsoleClient;
}

/** A value of the input's kind, for an empty field: the bad bytes then go inside text that passes its format. */
const plausible = (type: string, value: string) => value || ({ email: 'a@example.test', password: 'correct horse battery staple', url: 'https://example.com/a' } as Record<string, string>)[type] || 'a';

const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
const attribute = (attributes: string, name: string) => {
  const found = new RegExp(`(?:^|\\s)${name}="([^"]*)"`).exec(attributes)?.[1];
  return found === undefined ? undefined : unescape(found);
};

/** The forms of a page: method, action and the first value of each field name (as a browser would send it). */
export function formsOf(text: string, client: ConsoleClient, pagePath: string): FoundForm[] {
  return [...text.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, attributes, content]) => {
    const fields = new Map<string, string>();
    const add = (name: string | undefined, value: string) => {
      if (name && !fields.has(name)) fields.set(name, value);
    };
    for (const [, input] of content!.matchAll(/<input\b([^>]*)>/g)) {
      const type = attribute(input!, 'type') ?? 'text';
      if (!['submit', 'button', 'reset'].includes(type)) add(attribute(input!, 'name'), plausible(type, attribute(input!, 'value') ?? ''));
    }
    for (const [, select, options] of content!.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      const chosen = /<option\b([^>]*\sselected[^>]*)>([^<]*)/.exec(options!) ?? /<option\b([^>]*)>([^<]*)/.exec(options!);
      add(attribute(select!, 'name'), chosen ? (attribute(chosen[1]!, 'value') ?? unescape(chosen[2]!)) : '');
    }
    for (const [, area, value] of content!.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) add(attribute(area!, 'name'), unescape(value!));
    const action = attribute(attributes!, 'action') ?? pagePath;
    return { method: (attribute(attributes!, 'method') ?? 'get').toUpperCase() as FoundForm['method'], path: new URL(action, 'http://console.test').pathname, fields, client };
  });
}

/** What the crawl met: the forms, and every console URL with the client that met it first. */
export interface Found {
  forms: FoundForm[];
  urls: Map<string, ConsoleClient>;
}

/** Follows every console link, GET form and redirect from `starts`, as `client` (GETs only: nothing changes). */
export async function crawl(client: ConsoleClient, starts: string[], found: Found, t: { fail: (message: string) => void }) {
  const queue = [...starts];
  const visited = new Set<string>();
  while (queue.length > 0 && visited.size < 150) {
    const url = queue.shift()!;
    if (visited.has(url)) continue;
    visited.add(url);
    if (!found.urls.has(url)) found.urls.set(url, client);
    const page = await client.get(url);
    if (page.status >= 500) t.fail(`GET ${url}: ${page.status}`);
    const next: string[] = [];
    if (page.location?.startsWith('/console')) next.push(page.location);
    for (const [, href] of page.text.matchAll(/href="(\/console[^"#]*)"/g)) next.push(unescape(href!));
    for (const form of formsOf(page.text, client, new URL(url, 'http://console.test').pathname)) {
      found.forms.push(form);
      if (form.method === 'GET') next.push(`${form.path}?${new URLSearchParams([...form.fields])}`);
    }
    queue.push(...next.filter((link) => !link.startsWith('/console/assets/') && !visited.has(link)));
  }
}

/** The coin the console's alarms are made on (bitcoin, with a current value), from the data source `source`. */
export async function consoleCoin(sql: Sql, source: string) {
  await sql`insert into market.data_sources (name, kind, description) values (${source}, 'import', 'Console test fixture')`;
  await sql`insert into market.coins (id, slug, symbol, name, type, source) values (1, 'bitcoin', 'BTC', 'Bitcoin', 'coin', ${source})`;
  await sql`insert into market.coin_state (coin_id, price, volume_24h, marketcap) values (1, 100, 5000, 100000)`;
}

/** The settings accountWithEverything needs, with the SMTP mailbox at `smtpUrl` (and sign-up open). */
export const everythingEnv = (smtpUrl: string) => ({ SMTP_URL: smtpUrl, SMTP_TIMEOUT_MS: '2000', MAIL_FROM: 'Console <console@example.com>', CONSOLE_SIGNUP: 'open', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });

/**
 * The account holding one of everything a console page can list, each made through its own form
 * where one exists. Needs consoleCoin and the settings of everythingEnv.
 */
export async function accountWithEverything(sql: Sql, base: string, email = 'fuzz-user@example.com') {
  const { owner, client } = await signedInAccount(sql, base, email, 'fuzz user');
  await client.get('/console/keys');
  const made = async (path: string, form: Record<string, string>) => {
    const page = await client.post(path, form);
    if (page.status >= 400) throw new Error(`${path}: ${page.status} ${page.text.slice(0, 300)}`);
    return page;
  };
  await made('/console/keys', { name: 'data', plan: 'free' });
  await made('/console/mcp-keys', { name: 'agent', plan: 'mcp-free' });
  await made('/console/widgets', { name: 'site', origins: 'https://example.com', plan: 'widget-free' });
  await made('/console/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'alarm.triggered' });
  await made('/console/webhooks', { url: 'http://127.0.0.1:9/other', events: 'alarm.triggered' });
  const [first, second] = await sql<{ id: string }[]>`select id from app.webhook_endpoints where owner = ${owner} order by id`;
  await made(`/console/webhooks/${first!.id}/test`, {});
  // a settled delivery (Redeliver) and a disabled endpoint (Re-enable), as the worker would leave them
  await sql`update app.webhook_deliveries set status = 'failed', attempts = 1 where endpoint_id = ${first!.id}`;
  await sql`update app.webhook_endpoints set status = 'disabled', disabled_at = now(), consecutive_failures = 10 where id = ${second!.id}`;
  await made('/console/alarms', { name: 'armed', coin: 'bitcoin', metric: 'rate', direction: 'above', target: '150', notification: 'email' });
  await made('/console/alarms', { name: 'fired', coin: 'bitcoin', metric: 'rate', direction: 'above', target: '160', notification: 'email' });
  await sql`update app.alarms set status = 'triggered', triggered_value = 170, triggered_at = now() where owner = ${owner} and name = 'fired'`;
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  await sql`select app.push_subscribe(${owner}, 'https://push.example.com/s/1', ${ecdh.getPublicKey().toString('base64url')}, ${randomBytes(16).toString('base64url')}, 'fuzz browser')`;
  return { owner, client };
}

