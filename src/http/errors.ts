// The one error path: every 4xx/5xx leaves as {error: {code, message, details}}.
import type { Context, Next } from 'koa';
import type { Logger } from '../log.ts';
import { routeLabel } from './observe.ts';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }

  // The reference contract's words (reference-endpoints.md, "Error envelope examples"): clients and
  // spreadsheet cells show them as they are. test/http/contract.test.ts compares each one.
  static validation(errors: Record<string, string[]>) {
    return new ApiError(422, 'validation', 'The request parameters are invalid.', { errors });
  }

  static notFound(what = 'resource') {
    return new ApiError(404, 'not_found', `The requested ${what} does not exist.`);
  }

  static payloadTooLarge(limitBytes: number) {
    return new ApiError(413, 'payload_too_large', `Request bodies are limited to ${limitBytes} bytes.`);
  }

  /** `what` needs the plan: 'This endpoint', 'This tool', or a window of the query ('The 28-day rsi window'). */
  static planRequired(plan: string, what = 'This endpoint') {
    return new ApiError(403, 'plan_required', `${what} requires the ${planTitle(plan)} plan or higher.`, { required_plan: plan });
  }
}

/** The Data API's plans as the specification and the reference write them (the Starter plan); others by their name (mcp-pro). */
const PLAN_TITLES: Record<string, string> = { free: 'Free', starter: 'Starter', pro: 'Pro' };
const planTitle = (plan: string) => PLAN_TITLES[plan] ?? plan;

/** The field message of a per_page over a cap: the largest one (query schema) or the key's plan's (admission). */
export const perPageOverCap = (cap: number) => `The per page must not be greater than ${cap}.`;

/**
 * SQLSTATEs mapped to HTTP. SQL functions raise class MD (MD404 and so on) with a client-safe
 * message, optionally `hint` = the envelope's code, `detail` = its details as JSON, `column` = the
 * invalid field; anything unlisted is a 500 whose text never leaves the server.
 */
const SQLSTATE_TO_HTTP: Record<string, { status: number; code: string; message?: string }> = {
  MD404: { status: 404, code: 'not_found' },
  MD422: { status: 422, code: 'validation' },
  MD409: { status: 409, code: 'conflict' },
  '22P02': { status: 422, code: 'validation', message: 'A parameter has an invalid format.' },
  '22003': { status: 422, code: 'validation', message: 'A parameter is out of range.' },
  '22007': { status: 422, code: 'validation', message: 'A date or time parameter is invalid.' },
  '22008': { status: 422, code: 'validation', message: 'A date or time parameter is out of range.' },
  '23505': { status: 409, code: 'conflict', message: 'The resource already exists.' },
  '57014': { status: 503, code: 'timeout', message: 'The query took too long; narrow the request.' },
  '53300': { status: 503, code: 'unavailable', message: 'The service is busy; retry shortly.' },
};

interface PostgresError {
  code: string;
  message: string;
  severity?: string;
  hint?: string;
  detail?: string;
  column_name?: string;
}

/** DETAIL of an MD-class error: a JSON object becomes the envelope's details; anything else is not for clients. */
function sqlDetails(detail: string | undefined): Record<string, unknown> {
  if (!detail?.startsWith('{')) return {};
  try {
    return JSON.parse(detail) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const isPostgresError = (error: unknown): error is PostgresError =>
  typeof error === 'object' && error !== null && 'severity' in error && typeof (error as PostgresError).code === 'string';

/** postgres.js codes for a connection that could not be opened or was lost (socket errors pass through). */
const CONNECTION_LOST = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT',
]);

/**
 * The database is down, restarting or unreachable: a retry shortly may well succeed, so this is a
 * 503, not a 500. SQLSTATE class 08 is connection exceptions, 57P01-57P03 a server shutting down or
 * starting, and the embedded multiplexer answers FATAL XX000 when its database process fails.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  if (!isPostgresError(error)) return CONNECTION_LOST.has(code);
  return (
    code.startsWith('08') ||
    ['57P01', '57P02', '57P03'].includes(code) ||
    (code === 'XX000' && error.severity === 'FATAL' && error.message === 'embedded database failure')
  );
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError(503, 'service_unavailable', 'The database is unavailable at the moment; retry shortly.', {}, { 'Retry-After': '5' });
  }
  if (isPostgresError(error)) {
    const mapped = SQLSTATE_TO_HTTP[error.code];
    if (mapped && error.code.startsWith('MD')) {
      // A function's own error code travels in HINT (e.g. alarm_would_trigger), its details in DETAIL as
      // JSON; an MD422 naming a COLUMN and no code of its own is a validation error of that field.
      const code = error.hint && /^[a-z][a-z0-9_]*$/.test(error.hint) ? error.hint : undefined;
      if (!code && error.code === 'MD422' && error.column_name) return ApiError.validation({ [error.column_name]: [error.message] });
      return new ApiError(mapped.status, code ?? mapped.code, error.message, sqlDetails(error.detail));
    }
    if (mapped) return new ApiError(mapped.status, mapped.code, mapped.message ?? error.message);
  }
  const status = (error as { status?: number }).status;
  // Errors koa and its middleware raise on purpose (413 from the body parser, 400 bad JSON).
  if (typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: boolean }).expose) {
    const code = status === 413 ? 'payload_too_large' : status === 415 ? 'unsupported_media_type' : 'bad_request';
    return new ApiError(status, code, (error as Error).message);
  }
  return new ApiError(500, 'server_error', 'An unexpected error occurred. Retry later.');
}

export function render(ctx: Context, error: ApiError) {
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.body = { error: { code: error.code, message: error.message, details: error.details } };
}

/** First in the chain: renders every failure, and unknown routes, as the envelope. */
export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(404, 'not_found', 'No such endpoint.');
    } catch (error) {
      const apiError = toApiError(error);
      // Log what went wrong, never the query string or the request's headers.
      if (apiError.status >= 500) logger.error({ requestId: ctx.state.requestId, method: ctx.method, route: routeLabel(ctx), err: error }, 'request failed');
      render(ctx, apiError);
    }
  };
}
