// The response headers of an /api/v1 answer: kept in a list while the request is handled and
// written with the body in one writeHead. Node validates and stores a header set on the response
// (setHeader) at about twice the cost of one in writeHead's list, and only when no header was set
// before; an API answer carries some twenty. An answer not written by writeAnswer (an error, a 304)
// gets the list set on the response, as every header was before.
import type { Context } from 'koa';
import compress from 'koa-compress';

/** Bodies under this many bytes are sent as they are: compressing them saves less than it costs. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * gzip or brotli as Accept-Encoding asks, above COMPRESS_THRESHOLD_BYTES (koa-compress negotiates
 * and streams). Never an event stream (MCP): it must not wait for a buffer to fill.
 */
export const compressResponses = compress({
  threshold: COMPRESS_THRESHOLD_BYTES,
  filter: (type) => !/event-stream/i.test(type) && /json|^text\/|javascript|xml|svg/i.test(type),
  zstd: false,
  deflate: false,
});

const listOf = (ctx: Context) => ctx.state.head as string[] | undefined;

/** Starts keeping this request's response headers in a list (the API's answers: see writeAnswer). */
export function openHead(ctx: Context, headers: string[]) {
  ctx.state.head = headers;
}

/** Whether this request's headers are being kept in a list. */
export const headOpen = (ctx: Context) => listOf(ctx) !== undefined;

/** The position of a header's name in the list (names compared as HTTP does, without case), or -1. */
function indexOf(list: string[], name: string) {
  for (let i = 0; i < list.length; i += 2) if (sameName(list[i]!, name)) return i;
  return -1;
}

/** ASCII case-insensitive equality, without the two lower-cased copies toLowerCase would make per comparison. */
function sameName(a: string, b: string) {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const lower = x | 0x20;
    if (lower !== (y | 0x20) || lower < 0x61 || lower > 0x7a) return false;
  }
  return true;
}

/** Sets response headers (a flat [name, value, …] list), replacing any of the same name: in the list while it is kept, else on the response. */
export function setHeaders(ctx: Context, pairs: readonly string[]) {
  const list = listOf(ctx);
  if (!list) {
    for (let i = 0; i < pairs.length; i += 2) ctx.res.setHeader(pairs[i]!, pairs[i + 1]!);
    return;
  }
  for (let i = 0; i < pairs.length; i += 2) {
    const at = indexOf(list, pairs[i]!);
    if (at >= 0) list[at + 1] = pairs[i + 1]!;
    else list.push(pairs[i]!, pairs[i + 1]!);
  }
}

/** Sets headers the response has none of yet (the caller knows): in the list without looking for them there. */
export function addHeaders(ctx: Context, pairs: readonly string[]) {
  const list = listOf(ctx);
  if (!list) for (let i = 0; i < pairs.length; i += 2) ctx.res.setHeader(pairs[i]!, pairs[i + 1]!);
  else for (let i = 0; i < pairs.length; i++) list.push(pairs[i]!);
}

/** Adds a header line beside any of the same name (e.g. a second Link). */
export function appendHeader(ctx: Context, name: string, value: string) {
  const list = listOf(ctx);
  if (list) list.push(name, value);
  else ctx.append(name, value);
}

/** A response header's value as set so far. */
export function getHeader(ctx: Context, name: string): string | undefined {
  const list = listOf(ctx);
  const at = list ? indexOf(list, name) : -1;
  return at >= 0 ? list![at + 1] : ctx.response.get(name) || undefined;
}

/** Sets the kept headers on the response and stops keeping them (every answer that writeAnswer does not write). */
export function flushHead(ctx: Context) {
  const list = listOf(ctx);
  if (!list) return;
  ctx.state.head = undefined;
  for (let i = 0; i < list.length; i += 2) ctx.res.appendHeader(list[i]!, list[i + 1]!);
}

const noop = async () => {};

/**
 * Answers with a JSON body (its text, or bytes already in `encoding`): with the kept headers in one
 * writeHead. A body that koa-compress may compress (big enough, and the client accepts an encoding)
 * is answered through Koa instead, as is every answer whose headers are not kept.
 */
export async function writeAnswer(ctx: Context, status: number, body: string | Buffer, encoding: string | null = null) {
  ctx.status = status;
  const list = listOf(ctx);
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (!list || (encoding === null && bytes >= COMPRESS_THRESHOLD_BYTES && ctx.get('accept-encoding'))) {
    flushHead(ctx);
    ctx.type = JSON_TYPE;
    ctx.body = body;
    if (encoding) ctx.set('Content-Encoding', encoding);
    // the app's chain leaves compressing a kept-headers answer to here (it must not set Vary first)
    if (list) await compressResponses(ctx, noop);
    return;
  }
  ctx.state.head = undefined;
  if (encoding) list.push('Content-Encoding', encoding);
  list.push('Content-Type', JSON_TYPE, 'Content-Length', String(bytes));
  ctx.respond = false;
  ctx.res.writeHead(status, list);
  ctx.res.end(body);
}

/** Answers 304 Not Modified: the kept headers in one writeHead, without a body (through Koa when none are kept). */
export function writeNotModified(ctx: Context) {
  ctx.status = 304;
  const list = listOf(ctx);
  if (!list) return void (ctx.body = null);
  ctx.state.head = undefined;
  ctx.respond = false;
  ctx.res.writeHead(304, list);
  ctx.res.end();
}
