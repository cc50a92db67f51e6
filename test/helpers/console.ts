// A browser stand-in for the console's HTTP tests: a cookie jar, forms posted with the CSRF token
// of the last page, redirects not followed (the tests look at them).
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
