// The service's log lines on stderr (src/log.ts): written asynchronously, so an answer never waits
// for the terminal or the log collector, and yet none lost at a normal exit, process.exit included.
import { spawnSync } from 'node:child_process';
import test from 'ava';
import { LOG_BUFFER_BYTES } from '../src/log.ts';
import { captureLog } from './helpers/log.ts';

/** A process that logs `count` lines through the service's logger on its real stderr, then exits at once. */
function logThenExit(format: 'json' | 'pretty', count: number) {
  const script = `
    import { createLogger } from './src/log.ts';
    const logger = createLogger({ LOG_FORMAT: '${format}', LOG_LEVEL: 'info' });
    for (let i = 0; i < ${count}; i++) logger.info({ line: i, key: 'mdk_secret' }, 'line ' + i);
    process.exit(0);`;
  const result = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status, lines: result.stderr.split('\n').filter(Boolean) };
}

test('JSON lines: every one of 20 000 reaches stderr although the process exits right after logging them', (t) => {
  const { status, lines } = logThenExit('json', 20_000);
  t.is(status, 0);
  t.is(lines.length, 20_000);
  const last = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
  t.is(last.line, 19_999);
  t.is(last.key, '[Redacted]');
});

test('pretty lines (a terminal, or LOG_FORMAT=pretty) are formatted off the main thread and flushed at exit too', (t) => {
  const { status, lines } = logThenExit('pretty', 200);
  t.is(status, 0);
  t.is(lines.length, 200);
  t.regex(lines.at(-1)!, /INFO.*line 199/);
  t.false(lines.some((line) => line.includes('mdk_secret')));
});

test('secret fields are censored at any of the first three levels, URLs keep all but the password, the logged object untouched', (t) => {
  const log = captureLog();
  const given = {
    key: 'mdk_top',
    request: { headers: { authorization: 'Bearer mdk_nested', host: 'api.example' }, token: 't0' },
    config: { DATABASE_URL: 'postgres://mdapi:hunter2@db.example:5432/market' },
    list: [{ secret: 's1' }],
    deep: { a: { b: { password: 'fourth level' } } },
    err: Object.assign(new Error('failed'), { pass: 'p1' }),
  };
  log.logger.info(given, 'with secrets');
  log.logger.child({ apiKey: 'mdk_bound' }).info({ route: '/x' }, 'child');
  const [line, child] = log.lines() as any[];
  t.is(line.key, '[Redacted]');
  t.is(line.request.headers.authorization, '[Redacted]');
  t.is(line.request.headers.host, 'api.example');
  t.is(line.request.token, '[Redacted]');
  t.is(line.config.DATABASE_URL, 'postgres://mdapi:redacted@db.example:5432/market');
  t.is(line.list[0].secret, '[Redacted]');
  t.is(line.deep.a.b.password, 'fourth level', 'three levels, as documented');
  t.is(line.err.pass, '[Redacted]');
  t.is(line.err.message, 'failed');
  t.regex(line.err.stack, /Error: failed/);
  t.is(child.apiKey, '[Redacted]');
  t.is(child.route, '/x');
  t.false(log.text().includes('mdk_') || log.text().includes('hunter2') || log.text().includes('s1'));
  t.is(given.key, 'mdk_top', "the caller's object is left as it was");
  t.is(given.request.headers.authorization, 'Bearer mdk_nested');
  t.is(given.err.pass, 'p1');
});

test('lines that stderr does not take are dropped beyond 16 MiB waiting, and counted, rather than held', (t) => {
  // 100 000 lines of about 260 bytes at once into a pipe nobody reads until the end: over the bound
  const script = `
    import { createLogger, droppedLogLines } from './src/log.ts';
    const logger = createLogger({ LOG_FORMAT: 'json', LOG_LEVEL: 'info' });
    for (let i = 0; i < 100000; i++) logger.info({ line: i, route: '/api/v1/coins/{slug}', status: 200 }, 'a request line padded to about the size of a real one');
    process.stdout.write(String(droppedLogLines()));
    process.exit(0);`;
  const result = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  t.is(result.status, 0);
  const written = result.stderr.split('\n').filter(Boolean).length;
  const dropped = Number(result.stdout);
  t.true(dropped > 0, 'some were dropped');
  // what waited is at most the bound, besides what the pipe took before it filled
  t.true(Buffer.byteLength(result.stderr) <= LOG_BUFFER_BYTES + 1024 * 1024, `${Buffer.byteLength(result.stderr)} bytes written`);
  t.is(written + dropped, 100_000, 'every line either written or counted');
});
