// The layers, checked by test/imports.test.ts (and `npm run lint:imports`): entry points (bin/) compose jobs/ and src/; jobs/
// only schedule what src/ does; src/ never reaches up into jobs/ or bin/; no module is part of an import circle.
module.exports = {
  forbidden: [
    { name: 'src-not-to-jobs', severity: 'error', comment: 'src/ does the work; jobs/ only schedule it: the entry points hand the schedule to the worker', from: { path: '^src/' }, to: { path: '^jobs/' } },
    { name: 'src-not-to-bin', severity: 'error', comment: 'bin/ holds the entry points; nothing imports them', from: { path: '^(src|jobs)/' }, to: { path: '^bin/' } },
    { name: 'runtime-not-to-tests', severity: 'error', comment: 'the service never loads test or bench code', from: { path: '^(src|jobs|bin)/' }, to: { path: '^(test|bench)/' } },
    { name: 'no-circular', severity: 'error', comment: 'modules import in one direction: a circle (type imports included) means a declaration lives in the wrong module', from: {}, to: { circular: true } },
    { name: 'http-core-not-to-groups', severity: 'error', comment: 'the HTTP core (src/http) is handed the routes of the API groups (src/service.ts); it never imports them', from: { path: '^src/http/' }, to: { path: '^src/api/' } },
    { name: 'no-circular-sources', severity: 'error', comment: 'a source module never imports the HTTP layer', from: { path: '^src/sources/' }, to: { path: '^src/(http|api)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
