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
