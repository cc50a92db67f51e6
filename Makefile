# market-data-api — operator targets. `make help` lists them.
SHELL := /bin/bash
# The project's Node 22 (npm package `node`) comes first, whatever node the machine has.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
MDAPI := node bin/cli.ts
PLAN ?= free
OWNER ?= default
FILE ?= backup-$(shell date +%Y%m%d-%H%M%S).tar.gz

.DEFAULT_GOAL := help
.PHONY: help deps start test test-server typecheck migrate psql psql-analyst key account import-candles import-coins backfill import-content worker db bench chaos topology backup restore venues-replay openapi-examples schema-dump config-doc

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

# patches/: fixes to dependencies, applied by npm's postinstall (patch-package).
# npm runs on the machine's node, which may be older than the Node 22 the project asks for: npm then
# warns EBADENGINE once per package that asks for a newer one. Harmless here, since everything make
# runs uses the Node 22 of the npm package `node` (node_modules/.bin/node): those warnings are
# counted in one line instead of printed; every other line, errors included, is printed.
# A node_modules that is a symbolic link (one install shared by several checkouts) is left alone:
# npm ci would empty the directory it points to.
node_modules/.installed: package.json package-lock.json $(wildcard patches/*.patch)
	@if [ -L node_modules ]; then echo "node_modules links to a shared install ($$(readlink node_modules)): not reinstalling through the link; run npm ci there if the package files changed" >&2; exit 0; fi; \
	echo "installing dependencies (npm ci): a minute or two"; \
	set -o pipefail; npm_node=$$(node --version); \
	npm ci --no-audit --no-fund 2>&1 | awk -v node="$$npm_node" ' \
	  /^npm warn EBADENGINE/ { if (/Unsupported engine/) n++; next } \
	  /^npm warn install-scripts/ { if (/^npm warn install-scripts   [^ ]+@/) s++; next } { print } \
	  END { if (n) printf "npm ran on node %s: %d packages asked for a newer Node (npm warn EBADENGINE, not shown); harmless, make runs everything on the project'"'"'s Node 22 (node_modules/.bin/node)\n", node, n; \
	        if (s) printf "%d packages ran their install scripts (npm warn install-scripts, not shown: npm 11 lists those no allowScripts entry names; npm install-scripts ls shows them)\n", s }'
	@[ -L node_modules ] || touch $@

deps: node_modules/.installed ## install dependencies (npm ci), only when package files changed

start: deps ## start the service (embedded database when DATABASE_URL is unset)
	node bin/main.ts

test: deps ## run the whole test suite on a real TimescaleDB (embedded unless TEST_DATABASE_URL)
	npm test

test-server: deps ## the suite on a TimescaleDB server: make test-server TEST_DATABASE_URL=postgres://user@host:port/db
	@test -n "$(TEST_DATABASE_URL)" || { echo "set TEST_DATABASE_URL to a superuser (or CREATEDB) URL of a PostgreSQL >= 15 server with TimescaleDB >= 2.13 preloaded" >&2; exit 2; }
	TEST_DATABASE_URL="$(TEST_DATABASE_URL)" TEST_DATABASE_READ_URL="$(TEST_DATABASE_READ_URL)" npm test

schema-dump: deps ## regenerate sql/schema.sql, the market, api and app schemas as the migrations build them (checked by the tests)
	UPDATE_SCHEMA_DUMP=1 node test/run.ts test/db/schema_dump.test.ts

config-doc: deps ## regenerate docs/configuration.md from the configuration schema in src/config.ts (checked by the tests)
	node --input-type=module -e "import { writeConfigurationDocument } from './src/config-doc.ts'; writeConfigurationDocument()"

openapi-examples: deps ## record every operation's answer over the demo data as its OpenAPI example (src/http/openapi-examples.json)
	UPDATE_OPENAPI_EXAMPLES=1 node test/run.ts test/http/contract.test.ts

typecheck: deps ## type-check with tsc
	npx tsc --noEmit

migrate: deps ## apply migrations and re-apply SQL functions
	$(MDAPI) migrate

psql: deps ## open psql as the superuser (the service must be running for the embedded database)
	psql -X "$$($(MDAPI) db-url)"

psql-analyst: deps ## open psql as the read-only analyst role
	psql -X "$$($(MDAPI) db-url --analyst)"

key: deps ## create an API key: make key PLAN=free|starter|pro [OWNER=name]; an MCP key: PLAN=mcp-free|mcp-pro
	@$(MDAPI) create-key --plan $(PLAN) --owner $(OWNER) $(if $(filter mcp-%,$(PLAN)),--scope mcp)

account: deps ## make a console account and print its set-password link: make account EMAIL=addr [ADMIN=1] [OWNER=name]
	@$(MDAPI) create-account --email "$(EMAIL)" $(if $(ADMIN),--admin) $(if $(filter command line environment,$(origin OWNER)),--owner "$(OWNER)")

import-candles: deps ## import OHLCV history: make import-candles SLUG=s FILE=f.csv [SYMBOL=X NAME=N] [FORMAT=binance-kline]
	$(MDAPI) import-candles --slug "$(SLUG)" $(if $(SYMBOL),--symbol "$(SYMBOL)") $(if $(NAME),--name "$(NAME)") $(if $(FORMAT),--format "$(FORMAT)") "$(FILE)"

import-coins: deps ## import or update the coin catalogue: make import-coins [FILE=coins.json] (default the shipped catalogue)
	$(MDAPI) import-coins $(if $(filter command line environment environment override,$(origin FILE)),"$(FILE)")

backfill: deps ## history from the venues (EXCHANGES, EXCHANGE_URLS), paced, resumable: make backfill [COINS=all|a,b (default all)] [SINCE=YYYY-MM-DD] [INTERVAL=daily,hourly,minutely]
	$(MDAPI) backfill $(if $(COINS),--coins "$(COINS)") $(if $(SINCE),--since "$(SINCE)") $(if $(INTERVAL),--interval "$(INTERVAL)")

import-content: deps ## import curated content (wallets, articles, videos, insights JSON): make import-content DIR=content/demo
	$(MDAPI) import-content "$(DIR)"

worker: deps ## run the job worker alone (set WORKER=off on the API process)
	$(MDAPI) worker

db: deps ## run the embedded database alone, in the foreground
	$(MDAPI) db

bench: deps ## run the benchmarks under bench/ and print their figures
	node bench/run.ts

chaos: deps ## fault injection on loopback: kill worker, API, database (and stream holders) at random, then check the data (CHAOS_ROUNDS, CHAOS_SEED, CHAOS_MARKET=exchanges)
	node bench/chaos.ts

topology: deps ## several API processes and workers on one database act as one service (TOPOLOGY_DATABASE_URL, else embedded)
	node bench/topology.ts

venues-replay: deps ## serve the ten venues, ECB rates and CoinPaprika offline on loopback (PORT=8780 COINS=300; COINS=2500: real-size lists, ~11 000 markets); prints the env for make start
	node dev/venues/serve.ts --port $(or $(PORT),8780) --coins $(or $(COINS),300)

backup: deps ## back the database up into FILE (default backup-<time>.tar.gz)
	$(MDAPI) backup $(FILE)

restore: deps ## restore FILE into the database (stop the service first for the embedded one)
	$(MDAPI) restore $(FILE)
