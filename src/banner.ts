// What `make start` says once the service listens: one JSON line for log collectors; on a
// terminal, a few lines for the person who just started it — where it is, how to get a key,
// where to look next.
import type { Config } from './config.ts';
import { writesForPeople, type Logger } from './log.ts';

export function startupBanner(url: string, config: Config): string {
  const database = config.database.embedded ? `embedded database, data in ${config.DATA_DIR}` : 'database: DATABASE_URL';
  const market =
    config.MARKET_SOURCE === 'simulated'
      ? 'the demo market (simulated prices; MARKET_SOURCE=exchanges for the real venues)'
      : config.MARKET_SOURCE === 'exchanges' ? `the exchanges (${config.EXCHANGES ?? 'the default venues'})` : 'none (MARKET_SOURCE=none)';
  return [
    `market-data-api listening on ${url} (${database})`,
    `  an API key      make key   (PLAN=free|starter|pro; an MCP key: PLAN=mcp-free)`,
    `  try it          curl -H "Authorization: Bearer <key>" ${url}/api/v1/ping`,
    `  status          ${url}/status`,
    `  API reference   ${url}/docs/api`,
    `  MCP             ${url}/mcp`,
    ...(config.CONSOLE === 'off' ? [] : [`  console         ${url}/console   (the first admin: make account EMAIL=you@example.com ADMIN=1)`]),
    `  market data     ${market}`,
    '  Ctrl-C stops the service',
  ].join('\n');
}

/** The line that says the service listens: the banner on a terminal, the same fields as always in JSON. */
export function announceListening(logger: Logger, url: string, config: Config): void {
  if (writesForPeople(logger)) logger.info(startupBanner(url, config));
  else logger.info({ url: `${url}/api/v1`, database: config.database.embedded ? `embedded, ${config.database.url}` : 'DATABASE_URL' }, `market-data-api listening on ${url}/api/v1`);
}
