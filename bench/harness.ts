// A small closed-loop load generator: `concurrency` workers issue `requests` calls in total and
// the latencies give requests/second and percentiles; with `seconds`, they issue calls until that
// time has passed instead (requests then counts what was done). Figures only, never pass/fail.
export interface Figures {
  name: string;
  requests: number;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
}

import { spawn } from 'node:child_process';
import { request } from 'node:http';

/**
 * One GET through node:http, so that the bytes are those on the wire (fetch would decode them);
 * on a connection of its own (no keep-alive agent), so no idle socket outlives the servers closed.
 */
export function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: response.statusCode!, headers: response.headers, body, bytes: body.length });
      });
      response.on('error', reject);
    }).on('error', reject).end();
  });
}

/** The q-quantile of some figures (linear between the two nearest). */
export function quantile(values: number[], q: number) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  return sorted[below]! + (sorted[Math.min(below + 1, sorted.length - 1)]! - sorted[below]!) * (at - below);
}

export async function measure(
  name: string,
  call: () => Promise<unknown>,
  { requests = 500, concurrency = 8, warmup = 20, seconds }: { requests?: number; concurrency?: number; warmup?: number; seconds?: number } = {},
): Promise<Figures> {
  for (let i = 0; i < warmup; i++) await call();
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  const deadline = seconds === undefined ? Infinity : started + seconds * 1000;
  const more = () => (seconds === undefined ? issued < requests : performance.now() < deadline);
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (more()) {
        issued++;
        const begin = performance.now();
        await call();
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { name, requests: latencies.length, concurrency, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), max: latencies.at(-1)! };
}

export function printTable(rows: Figures[]) {
  printColumns(
    ['benchmark', 'requests', 'conc.', 'req/s', 'p50 ms', 'p99 ms', 'max ms'],
    rows.map((row) => [row.name, String(row.requests), String(row.concurrency), row.rps.toFixed(0), row.p50.toFixed(2), row.p99.toFixed(2), row.max.toFixed(2)]),
  );
}

/** A plain-text table: the first column left-aligned, the figures right-aligned. */
export function printColumns(header: string[], lines: string[][]) {
  const widths = header.map((title, i) => Math.max(title.length, ...lines.map((line) => line[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}

/** A route's answer as a client gets it uncompressed: its headers and bytes, which a ceiling then serves. */
export interface RawAnswer {
  headers: [string, string][];
  body: Buffer;
}

export async function fetchRaw(url: string, headers: Record<string, string>): Promise<RawAnswer> {
  const answer = await rawGet(url, { ...headers, 'accept-encoding': 'identity' });
  const pairs = Object.entries(answer.headers).map(([name, value]): [string, string] => [name, Array.isArray(value) ? value.join(', ') : String(value)]);
  return { headers: pairs, body: answer.body };
}

/**
 * The ceiling: a bare Koa process of its own (bench/as-run/bare.ts) answering GET /<name> with the
 * answer last served under that name, headers and bytes (bodyOnly: the body and its type only).
 */
export async function startCeiling(): Promise<{ url: string; serve(name: string, answer: RawAnswer, bodyOnly?: boolean): Promise<void>; close(): void }> {
  const bare = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', new URL('./as-run/bare.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    bare.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    bare.once('exit', (code) => reject(new Error(`the bare Koa process exited (${code})`)));
  });
  return {
    url,
    async serve(name, answer, bodyOnly = false) {
      const headers = bodyOnly ? answer.headers.filter(([header]) => header === 'content-type') : answer.headers;
      await fetch(`${url}/${name}`, { method: 'PUT', headers: { 'x-answer-headers': JSON.stringify(headers) }, body: new Uint8Array(answer.body) });
    },
    close: () => void bare.kill(),
  };
}
