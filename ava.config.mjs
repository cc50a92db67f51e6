// ava's configuration (a file, not package.json, for the sorter). Four files at a time on the two
// cores CI has (a file often waits: on its database process, a child process, Chromium, a timer):
// with three the cores idled a fifth of a run once issue 45's files came (10.2 minutes); the longest files start first, so that no long one
// is left to run alone at the end (the run takes at least as long as its longest file). test/run.ts
// writes each file's result times to .cache/test-times.tsv to sort this list by.
const LONGEST_FIRST = [
  'test/console/journey.test.ts', // builds the run's demo template, then Chromium
  // while it builds: the long files that need no demo data
  'test/cli.test.ts',
  'test/http/pages_a11y.test.ts',
  'test/service_exchanges.test.ts',
  'test/first_run.test.ts', // bin/main.ts on a fresh database, as make start
  'test/sources/backfill.test.ts',
  'test/streams/venue_stream.test.ts',
  'test/jobs/present_first.test.ts', // two markets' first starts, compared
  'test/db/supervision.test.ts',
  'test/http/reference.test.ts',
  'test/venues/replay.test.ts', // mostly waiting on the faults' timeouts
  'test/sources/backfill_scale.test.ts', // ten venues' 2 100 minutes
  'test/sql/coin_state_incremental.test.ts', // 20 000 coins, compared with a full recomputation
  'test/streams/venue_candles.test.ts', // the streams' candles on a moved clock
  'test/streams/venue_subscriptions.test.ts', // 79 markets' candle streams, half a venue's subscriptions dropped, on a moved clock
  'test/streams/venue_leases.test.ts', // three holders and their lease timeouts
  'test/streams/minute_division.test.ts',
  'test/streams/venue_discipline.test.ts',
  'test/streams/venue_formats.test.ts',
  // then the files on the demo data: each copy catches up the minutes since the template was built
  'test/streams/holder.test.ts', // a real stream process killed and taken over
  'test/widgets/embed.test.ts',
  'test/widgets/console.test.ts',
  'test/widgets/widgets.test.ts',
  'test/http/contract.test.ts',
  'test/http/slug_case.test.ts',
  'test/sql/slug_case.test.ts',
];
const rank = (file) => {
  const at = LONGEST_FIRST.findIndex((path) => file.endsWith(path));
  return at === -1 ? LONGEST_FIRST.length : at;
};

export default {
  files: ['test/**/*.test.ts'],
  extensions: { ts: 'module' },
  workerThreads: false,
  concurrency: 4,
  timeout: '5m',
  // Liftoff, V8's baseline WebAssembly compiler, only: each file's database process (PGlite) and the
  // type stripper (amaro) otherwise spend seconds of CPU re-optimising their hot WASM functions in
  // every process, more than the optimised code saves in a test file's lifetime. The embedded
  // database's processes inherit it (fork passes execArgv on).
  nodeArguments: ['--disable-warning=ExperimentalWarning', '--liftoff-only'],
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, [], { numeric: true }),
};
