// The layers, checked by test/imports.test.ts (and `npm run lint:imports`): entry points (bin/) compose jobs/ and src/;
// jobs/ only schedule what src/ does; src/ never reaches up into jobs/ or bin/, nor into the code around the service
// (dev/, test/, bench/). `reachable` rules hold at any depth: a module may not get there through another one either.
module.exports = {
  forbidden: [
    { name: 'src-not-to-jobs', severity: 'error', comment: 'src/ does the work; jobs/ only schedule it: the entry points hand the schedule to the worker', from: { path: '^src/' }, to: { path: '^jobs/', reachable: true } },
    { name: 'src-not-to-bin', severity: 'error', comment: 'bin/ holds the entry points; nothing imports them', from: { path: '^(src|jobs)/' }, to: { path: '^bin/', reachable: true } },
    { name: 'src-not-to-service', severity: 'error', comment: 'src/service.ts is the composition root: it imports the modules, none of them imports it', from: { path: '^src/', pathNot: '^src/service\\.ts$' }, to: { path: '^src/service\\.ts$', reachable: true } },
    { name: 'runtime-not-to-tests', severity: 'error', comment: 'the service never loads test, bench or dev code', from: { path: '^(src|jobs|bin)/' }, to: { path: '^(test|bench|dev)/', reachable: true } },
    { name: 'no-circular', severity: 'error', comment: 'modules import in one direction: a circle (type imports included) means a declaration lives in the wrong module', from: {}, to: { circular: true } },
    { name: 'http-core-not-to-groups', severity: 'error', comment: 'the HTTP core (src/http) is handed the routes of the API groups (src/service.ts); it never imports them, nor anything that does', from: { path: '^src/http/' }, to: { path: '^src/api/', reachable: true } },
    { name: 'http-core-not-to-mail', severity: 'error', comment: 'whether e-mail is on is configuration (emailConfigured), not the mail module: the HTTP core never reaches it', from: { path: '^src/http/' }, to: { path: '^src/mail/', reachable: true } },
    { name: 'wings-only-from-service', severity: 'error', comment: 'a wing (console, widgets, MCP, streams) is plugged in by src/service.ts alone, handed to the HTTP core as a router or a socket; no other module of src/ or jobs/ reaches one (a wing\'s own files reach each other)', from: { path: '^(src|jobs)/', pathNot: ['^src/service\\.ts$', '^src/(console|widgets|mcp|streams)/'] }, to: { path: '^src/(console|widgets|mcp|streams)/', reachable: true } },
    { name: 'console-not-to-groups', severity: 'error', comment: 'the console calls the cores the API groups call (src/alarms.ts, src/webhooks/endpoints.ts, …), never the route files', from: { path: '^src/console/' }, to: { path: '^src/api/', reachable: true } },
    { name: 'http-core-not-to-pages', severity: 'error', comment: 'the public pages (src/pages) are handed to the HTTP core as a router (src/service.ts), as the console is; they stand on the core, which never imports them, nor anything that does', from: { path: '^src/http/' }, to: { path: '^src/pages/', reachable: true } },
    { name: 'pages-not-to-groups', severity: 'error', comment: 'a public page stands on the HTTP core\'s shared helpers, src/html.ts and the shared modules, never on an API route file (a wing is ruled out for it by wings-only-from-service)', from: { path: '^src/pages/' }, to: { path: '^src/api/', reachable: true } },
    { name: 'groups-not-to-mcp', severity: 'error', comment: 'the MCP tools are built on the API groups (src/mcp/tools.ts): a group never reaches them', from: { path: '^src/api/' }, to: { path: '^src/mcp/', reachable: true } },
    { name: 'db-is-the-floor', severity: 'error', comment: 'the database layer (client, migrations, the statement type, the listener, the embedded server) stands on configuration and logging alone: it reaches no module that uses it', from: { path: '^src/db/' }, to: { path: '^src/(http|api|pages|console|widgets|mcp|streams|sources|push|mail|webhooks|calculators|content)/', reachable: true } },
    { name: 'sources-not-to-http', severity: 'error', comment: 'a source module never reaches the HTTP layer', from: { path: '^src/sources/' }, to: { path: '^src/(http|api|mcp)/', reachable: true } },
    { name: 'bench-not-to-test', severity: 'error', comment: 'benches share the loopback stand-ins with the tests through dev/, never the tests themselves', from: { path: '^bench/' }, to: { path: '^test/', reachable: true } },
    { name: 'dev-not-to-test', severity: 'error', comment: 'dev/ serves the tests and the benches; it needs neither', from: { path: '^dev/' }, to: { path: '^(test|bench)/', reachable: true } },
    { name: 'wing-not-to-wing', severity: 'error', comment: 'a wing (console, widgets, MCP, streams) stands on the shared modules below it, never on another wing; src/service.ts plugs each in', from: { path: '^src/(console|widgets|mcp|streams)/' }, to: { path: '^src/(console|widgets|mcp|streams)/', pathNot: '^src/$1/', reachable: true } },
    { name: 'test-not-to-bench', severity: 'error', comment: 'the tests never load a bench (benches are not part of npm test)', from: { path: '^test/' }, to: { path: '^bench/', reachable: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
