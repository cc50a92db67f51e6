// What every console page group shares: the signed-in account, the page writer (layout, CSP with a
// fresh nonce, no-store), zod errors shown beside their fields, and the routes a page group declares
// its pages and forms on (`Routes`): every POST route passes the form check (readable, CSRF token
// matching) before its handler runs, so a handler never checks it by hand and a new one cannot forget.
// One kit per mounted console (src/console/router.ts); each page group takes it.
import { randomBytes } from 'node:crypto';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import type { Deps } from '../http/admission.ts';
import { toApiError } from '../http/errors.ts';
import { addErrors, firstValues, pathTextErrors, queryTextErrors } from '../http/validation.ts';
import { field, form, html, layout, notice, type Html, type PageAssets } from './html.ts';
import { cookieNames, csrfFor, csrfMatches, newToken, readCookie, safeNext, setCookie, tokenHash } from './session.ts';

export interface Account {
  session_id: string;
  owner: string;
  email: string;
  role: string;
}

export type Errors = Record<string, string>;
export type Fields = Record<string, string>;

/** A form refused inside a transaction (thrown to roll it back), with the errors to show. */
export class Refused extends Error {
  readonly errors: Errors;
  constructor(errors: Errors) {
    super('refused');
    this.errors = errors;
  }
}

/** zod's issues as one message per field, shown beside it */
export function fieldErrors(error: z.ZodError): Errors {
  const errors: Errors = {};
  for (const issue of error.issues) errors[String(issue.path[0] ?? 'form')] ??= issue.message;
  return errors;
}

/**
 * A refusal by the API's own code (an ApiError, or an MD-class error of its SQL functions) as a
 * console page shows it: the HTTP status the API would answer, and each message beside its field:
 * a validation error names its field; an error code of its own (alarm_would_trigger, ...) is put
 * beside the field `fieldOf` gives it, else at the top of the form ('form'). A 5xx is thrown on.
 */
export function refusal(error: unknown, fieldOf: Record<string, string> = {}): { status: number; errors: Errors } {
  const refused = toApiError(error);
  if (refused.status >= 500) throw error;
  const listed = (refused.details.errors ?? {}) as Record<string, string[]>;
  const errors: Errors = Object.fromEntries(Object.entries(listed).map(([name, messages]) => [name, messages[0] ?? refused.message]));
  if (Object.keys(errors).length === 0) errors[fieldOf[refused.code] ?? 'form'] = refused.message;
  return { status: refused.status, errors };
}

/** A database row's time as the console shows it. */
export const when = (date: Date | string) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** A page number from the query string: 1 unless a whole number 1..1 000 000. */
export const pageNumber = (value: unknown) => (typeof value === 'string' && /^[1-9]\d{0,6}$/.test(value) ? Math.min(Number(value), 1_000_000) : 1);

export const rowId = z.string().regex(/^\d{1,18}$/, 'Unknown item.');

/** The names console forms give their fields: any other is not written back into a page. */
const FIELD_NAME = /^[\w.-]{1,100}$/;

/** The matched route's path parameters as they arrived, still percent-encoded (the router decodes them leniently). */
function rawPathParams(ctx: Context): Record<string, string> {
  const route = (ctx.matched as Layer[] | undefined)?.findLast((layer) => layer.methods.includes(ctx.method));
  if (!route) return {};
  const captures = route.captures(ctx.path);
  return Object.fromEntries(route.paramNames.map((param, i) => [String(param.name), captures[i] ?? '']));
}

/** The path (and query) of the page a request came from, when it is one of this service's. */
function refererPath(ctx: Context): string {
  try {
    const from = new URL(ctx.get('referer'));
    return from.host === ctx.host ? `${from.pathname}${from.search}` : '';
  } catch {
    return '';
  }
}


export type Kit = ReturnType<typeof consoleKit>;

/** The console's shared parts, for one mounted console. */
export function consoleKit(deps: Deps) {
  const sessions = consoleSessions(deps);
  const page = pageWriter(sessions.csrf);
  const access = accessChecks(page, sessions.account);
  const forms = formInput(deps, page, sessions);
  const routes = (router: Router) => declaredRoutes(router, forms.checkForm, access);
  return { sql: deps.sql, config: deps.config, deps, page, ...sessions, ...access, ...forms, routes };
}

/** Sessions: the request's account, the token its forms are tied to, opening and ending one. */
function consoleSessions({ sql, config }: Deps) {
  const cookies = cookieNames(config);
  const idle = `${config.CONSOLE_SESSION_IDLE_MINUTES} minutes`;
  const absolute = `${config.CONSOLE_SESSION_DAYS} days`;

  /** The live session of the request (touched), or null. */
  async function account(ctx: Context): Promise<Account | null> {
    if (ctx.state.consoleAccount !== undefined) return ctx.state.consoleAccount;
    const token = readCookie(ctx, cookies.session);
    const [row] = token ? await sql<Account[]>`select * from app.console_session(${tokenHash(token)})` : [];
    return (ctx.state.consoleAccount = row ?? null);
  }

  /** The token a posted form is checked against: the session cookie's, else the pre-session cookie's (signed-out forms). */
  const sentFormToken = (ctx: Context) => readCookie(ctx, cookies.session) ?? readCookie(ctx, cookies.pre);

  /** The token forms are tied to: the session's, else a pre-session cookie's (made on first need). */
  function formToken(ctx: Context): string {
    const existing = ctx.state.consoleFormToken ?? sentFormToken(ctx);
    if (existing) return existing;
    const made = newToken();
    setCookie(ctx, cookies.pre, made, cookies.secure);
    ctx.state.consoleFormToken = made;
    return made;
  }

  const csrf = (ctx: Context) => csrfFor(formToken(ctx));

  async function openSession(ctx: Context, owner: string, next: string) {
    const token = newToken();
    await sql`select app.console_open_session(${owner}, ${tokenHash(token)}, ${ctx.get('user-agent').slice(0, 200)}, ${idle}::interval, ${absolute}::interval)`;
    setCookie(ctx, cookies.session, token, cookies.secure, config.CONSOLE_SESSION_DAYS * 86_400);
    ctx.redirect(safeNext(next));
  }

  const endSession = (ctx: Context) => setCookie(ctx, cookies.session, '', cookies.secure, 0);

  return { account, sentFormToken, csrf, openSession, endSession };
}

export type PageWriter = ReturnType<typeof pageWriter>;

/** The page writer: the layout, a CSP with a fresh nonce, no-store. */
function pageWriter(csrf: (ctx: Context) => string) {
  /** Writes a page; `assets`: its own scripts and style sheets (under /console/assets/), loaded with this response's nonce. */
  return function page(ctx: Context, title: string, body: Html, status = 200, who: Account | null = ctx.state.consoleAccount ?? null, assets?: PageAssets) {
    const nonce = randomBytes(16).toString('base64');
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    // nothing of another origin, no inline script or style; the one script carries this response's nonce;
    // the console's own service worker (/console/sw.js, push notifications) may be registered
    ctx.set('Content-Security-Policy', [
      "default-src 'none'", `script-src 'self' 'nonce-${nonce}'`, "style-src 'self'", "img-src 'self'", "connect-src 'self'",
      "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'", "worker-src 'self'",
    ].join('; '));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = layout({ title, body, who, path: ctx.path, csrf: csrf(ctx), nonce, assets });
  };
}

/** Who may open a page: the signed-in account, or an admin. */
function accessChecks(page: PageWriter, account: (ctx: Context) => Promise<Account | null>) {
  /** A signed-in page: the account, or a redirect to sign-in (then back here) / the stale-form message. */
  async function signedIn(ctx: Context): Promise<Account | null> {
    const who = await account(ctx);
    if (who) return who;
    if (ctx.method === 'GET') {
      ctx.redirect(`/console/sign-in?next=${encodeURIComponent(ctx.originalUrl)}`);
    } else {
      page(ctx, 'Signed out', html`${notice('Your session has ended (signed out, expired or revoked), so nothing was changed.', 'error')}
<p><a href="/console/sign-in?next=${encodeURIComponent(ctx.path)}">Sign in again</a>.</p>`, 403);
    }
    return null;
  }

  /** An admin's page: the account, or the sign-in redirect / a 403 page for another role. */
  async function admin(ctx: Context): Promise<Account | null> {
    const who = await signedIn(ctx);
    if (who && who.role !== 'admin') {
      page(ctx, 'Not allowed', notice('This page is for the service\'s operators.', 'error'), 403, who);
      return null;
    }
    return who;
  }

  return { signedIn, admin };
}

/**
 * The console's reading of its input: form bodies parsed, unreadable text refused on every route
 * (`parseForms`, applied by the router to all), and the form check of every POST route (`checkForm`).
 */
function formInput({ config }: Deps, page: PageWriter, { account, csrf, sentFormToken }: Pick<ReturnType<typeof consoleSessions>, 'account' | 'csrf' | 'sentFormToken'>) {
  /** Form bodies (the API's parser reads JSON only); an oversized one is answered by `checkForm`. */
  const formBodies: Middleware = bodyParser({
    enableTypes: ['form'],
    formLimit: config.MAX_BODY_BYTES,
    encoding: 'utf-8',
    onError: (error, ctx) => {
      ctx.state.consoleFormRefused = (error as { status?: number }).status === 413 ? 413 : 400;
    },
  });

  /**
   * Text PostgreSQL cannot store (NUL, unpaired surrogates) or that is not UTF-8, anywhere in the path,
   * the query or a form, refused for every console route at once by the API's own rule
   * (src/http/validation.ts): a 422 page naming each field, before any handler reads it.
   */
  const refuseUnreadableText: Middleware = async (ctx, next) => {
    const body = ctx.request.is('urlencoded') && typeof ctx.request.rawBody === 'string' ? ctx.request.rawBody : '';
    const inPath = pathTextErrors(rawPathParams(ctx));
    const inFields = addErrors(queryTextErrors(ctx.querystring), queryTextErrors(body));
    const errors = { ...inPath, ...inFields };
    if (Object.keys(errors).length === 0) return next();
    page(ctx, 'This was not read', html`${notice('Some of what was sent is not text this service can read, so nothing was changed.', 'error')}
<ul class="errors">${Object.entries(errors).map(([name, messages]) => html`<li><p class="error">Error: <strong>${name}</strong>: ${messages[0]}</p></li>`)}</ul>
${Object.keys(inPath).length === 0 ? sendAgain(ctx, csrf(ctx), inFields) : ''}
<p><a href="${safeNext(refererPath(ctx))}">Open the page again</a> and retry.</p>`, 422, await account(ctx));
  };

  /** Form bodies read, then any unreadable text refused: the console's one reading of its input. */
  const parseForms: Middleware = (ctx, next) => formBodies(ctx, () => refuseUnreadableText(ctx, next));

  /**
   * The form check every POST route passes before its handler (declaredRoutes puts it there): the
   * body read, and its CSRF field matching the token of the session (or, signed out, of the
   * pre-session cookie). Refused: a 400/413 or 403 page, nothing changed. Passed: the fields in
   * ctx.state.consoleFields.
   */
  const checkForm: Middleware = async (ctx, next) => {
    const refused = ctx.state.consoleFormRefused as 400 | 413 | undefined;
    if (refused) {
      page(ctx, 'This form was not read', notice(refused === 413 ? 'This form is larger than the service accepts. Nothing was changed.' : 'This form could not be read. Nothing was changed.', 'error'), refused);
      return;
    }
    const fields = firstValues(ctx.request.body);
    if (!csrfMatches(sentFormToken(ctx), fields.csrf)) {
      page(ctx, 'This form has expired', html`${notice('This form is out of date: it was opened before you signed in or out, or in another tab. Nothing was changed.', 'error')}
<p><a href="${ctx.path}">Open the page again</a> and retry.</p>`, 403);
      return;
    }
    ctx.state.consoleFields = fields;
    await next();
  };

  return { parseForms, checkForm };
}

/**
 * What was sent, to send again once corrected: each refused field with its error beside it (the bad
 * characters shown as U+FFFD), the others as they were; a password is never written back.
 */
function sendAgain(ctx: Context, csrf: string, errors: Record<string, string[]>): Html {
  const sent = ctx.method === 'POST' ? firstValues(ctx.request.body) : firstValues(ctx.query);
  const inputs = Object.entries(sent).filter(([name]) => name !== 'csrf' && FIELD_NAME.test(name)).map(([name, value]) => {
    const secret = /password/i.test(name);
    const error = errors[name]?.[0];
    if (!error && !secret) return html`<input type="hidden" name="${name}" value="${value}">`;
    return field({ name, label: name, type: secret ? 'password' : 'text', value: secret ? '' : value.replace(/\0|[\uD800-\uDFFF]/gu, '\uFFFD'), error });
  });
  return ctx.method === 'POST'
    ? form(ctx.path, csrf, inputs, 'Send again')
    : html`<form method="get" action="${ctx.path}">${inputs}<button type="submit">Send again</button></form>`;
}

/** A page anyone may open. */
export type PageHandler = (ctx: Context) => unknown;
/** A form anyone may post (sign-in, sign-up, reset: tied to the pre-session cookie): its fields, checked. */
export type FormHandler = (ctx: Context, fields: Fields) => unknown;
/** A page of a signed-in account (or an admin). */
export type AccountPageHandler = (ctx: Context, who: Account) => unknown;
/** A form of a signed-in account (or an admin): its fields, checked. */
export type AccountFormHandler = (ctx: Context, who: Account, fields: Fields) => unknown;

/** The routes a page group declares: pages (GET) and forms (POST), open, signed-in or admin-only. */
export interface Routes {
  get(path: string, handler: PageHandler): void;
  post(path: string, handler: FormHandler): void;
  signedIn: { get(path: string, handler: AccountPageHandler): void; post(path: string, handler: AccountFormHandler): void };
  admin: { get(path: string, handler: AccountPageHandler): void; post(path: string, handler: AccountFormHandler): void };
}

/**
 * Routes on the console's router where every POST route runs `checkForm` first: the one way a page
 * group declares a form (it is never handed the router), so none can skip the check. Then the
 * account is required, for signed-in and admin routes.
 */
function declaredRoutes(router: Router, checkForm: Middleware, { signedIn, admin }: ReturnType<typeof accessChecks>): Routes {
  const fieldsOf = (ctx: Context): Fields => ctx.state.consoleFields;
  const forAccount = (required: (ctx: Context) => Promise<Account | null>) => ({
    get: (path: string, handler: AccountPageHandler) => router.get(path, async (ctx) => {
      const who = await required(ctx);
      if (who) await handler(ctx, who);
    }),
    post: (path: string, handler: AccountFormHandler) => router.post(path, checkForm, async (ctx) => {
      const who = await required(ctx);
      if (who) await handler(ctx, who, fieldsOf(ctx));
    }),
  });
  return {
    get: (path, handler) => void router.get(path, async (ctx) => void (await handler(ctx))),
    post: (path, handler) => void router.post(path, checkForm, async (ctx) => void (await handler(ctx, fieldsOf(ctx)))),
    signedIn: forAccount(signedIn),
    admin: forAccount(admin),
  };
}

/** One group of console pages, declared on the console's routes with the shared kit. */
export type PageGroup = (routes: Routes, kit: Kit) => void;
