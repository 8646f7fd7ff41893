# artisan-go developer tasks. `make help` lists them.
.DEFAULT_GOAL := help
PKGS := ./...
# The bench tag builds queue:bench (the benchmark harness and its plot), which the shipped binary leaves out.
TAGS := -tags bench
# Tests mostly wait on databases, PHP and timers, so more of them run at once than there are cores.
PARALLEL := 4
# go test stops a package's binary after 10 minutes by default; internal/interop, which runs PHP
# workers beside ours on every database, took 544 s and in a later run 969 s on a 2-core machine.
TIMEOUT := -timeout 30m

help: ## List the tasks
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

test: ## Run every test against the local MariaDB, PostgreSQL, SQLite and PHP
	go test $(TAGS) -count=1 $(TIMEOUT) -parallel $(PARALLEL) $(PKGS)
	go test -tags otlp -count=1 ./tracing

build: ## Build bin/artisan-go; bin/artisan-go-otlp also exports traces over OTLP
	go build -o bin/artisan-go ./cmd/artisan-go
	go build -tags otlp -o bin/artisan-go-otlp ./cmd/artisan-go

chaos: ## Run the long fault suite (own database servers killed, workers killed and stopped) and print its table
	cd internal/faults && ARTISAN_GO_CHAOS=1 go test -count=1 -timeout 30m

race: ## Run every test with the race detector
	go test $(TAGS) -count=1 $(TIMEOUT) -race -parallel $(PARALLEL) $(PKGS)

# A count, not a duration: Go 1.26's fuzzing coordinator can report a bare "context deadline exceeded"
# failure, with no failing input, when a duration runs out while a worker on a loaded machine is busy
# (go.dev/issue/75804, fixed in Go 1.27). A count has no deadline to race; each target takes 2-30 s here.
FUZZTIME ?= 200000x
fuzz: ## Run every fuzz target for FUZZTIME (200000 inputs) each
	@set -e; for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "fuzz $$t ./$$(dirname $$f)"; go test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f); \
	  done; \
	done

lint: ## gofmt, go vet and the layering rules (internal/layering)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	go vet $(PKGS)
	go vet $(TAGS) $(PKGS)
	go vet -tags otlp ./tracing
	go test -count=1 ./internal/layering

bench: ## Run the Go benchmarks
	go test $(TAGS) -run '^$$' -bench . -benchmem $(PKGS)

demo: ## Run the demo on embedded SQLite
	go run ./cmd/artisan-go demo

# The bench runs from a binary built with the bench tag; its queue:work rows run the shipped binary.
BENCH := tmp/artisan-go-bench queue:bench --work-binary tmp/artisan-go --format json
BUILD_BENCH := go build -o tmp/artisan-go ./cmd/artisan-go && go build $(TAGS) -o tmp/artisan-go-bench ./cmd/artisan-go

bench-docs: ## Re-measure the burn-down figures of docs/bench.md and README (a quiet machine; about 22 minutes)
	$(BUILD_BENCH)
	$(BENCH) --db mysql,pgsql --php --peers --jobs 20000 --workers 1,4,16 --strategies batch > docs/bench-batch.json
	$(BENCH) --db sqlite --jobs 20000 --workers 1,4,16 --strategies batch --repeat 3 > docs/bench-sqlite.json
	$(BENCH) --db mysql --legacy-index --jobs 20000 --workers 1,4,16 --strategies batch --work-binary "" > docs/bench-legacy.json
	$(BENCH) --db mysql --server-version 10.5.0-MariaDB --jobs 20000 --workers 1,4,16 --strategies batch,optimistic --work-binary "" > docs/bench-old-server.json
	$(BENCH) --db mysql,pgsql,sqlite --jobs 5000 --workers 1,4,16 --concurrency 8 --batch 1 --strategies delete-mark,delete-retry,optimistic --work-binary "" --repeat 5 > docs/bench-others.json
	$(BENCH) --db sqlite --jobs 5000 --workers 1,4,16 --concurrency 8 --batch 1 --strategies delete-mark,delete-retry,optimistic --work-binary "" > docs/bench-sqlite-writes.json
	for s in delete-mark delete-retry optimistic; do $(BENCH) --db mysql,pgsql --jobs 10000 --workers 1,4,16 --strategies none --bare=false --work-concurrency 0 --work-strategy $$s > docs/bench-work-$$s.json; done
	$(BENCH) --db mysql,pgsql,sqlite --rate 200 --jobs 2000 --workers 4 --strategies batch,delete-retry --bare=false --work-binary "" > docs/bench-rate.json
	$(BENCH) --db sqlite --jobs 200000 --workers 1 --strategies batch --work-concurrency 0 --app-writes > docs/bench-app-writes-sqlite.json
	$(BENCH) --db sqlite --jobs 1000 --workers 1 --strategies none --bare=false --work-binary "" --php --app-writes --timeout 3m > docs/bench-app-writes-sqlite-php.json
	$(BENCH) --db mysql,pgsql --jobs 20000 --workers 1 --strategies batch --bare=false --php --work-concurrency 0 --app-writes > docs/bench-app-writes.json
	tmp/artisan-go-bench queue:bench --from docs/bench-batch.json,docs/bench-sqlite.json,docs/bench-others.json --plot docs/bench.svg > /dev/null

# LONG_STRATEGIES=batch,delete-retry adds delete-retry's rows (up to 40 minutes per server); on MariaDB
# it claims as PHP does and falls behind to its time limit. PHP's own claim: bench-long-php.
LONG_STRATEGIES ?= batch
bench-long: ## Ten minutes per row beside a long transaction (--long-tx), MariaDB then PostgreSQL: about 21 minutes
	$(BUILD_BENCH)
	$(BENCH) --db mysql --long-tx --rate 200 --jobs 120000 --workers 4 --strategies $(LONG_STRATEGIES) --bare=false --work-binary "" > docs/bench-long-mysql.json
	$(BENCH) --db pgsql --long-tx --rate 200 --jobs 120000 --workers 4 --strategies $(LONG_STRATEGIES) --bare=false --work-binary "" > docs/bench-long-pgsql.json

# PHP's own claim beside the same transaction: ten php artisan queue:work processes of the Laravel app
# instead of the Go workers, PostgreSQL then MariaDB; a row that falls behind ends 5 minutes after its
# last job is enqueued (about 30 minutes).
bench-long-php: ## Ten php artisan queue:work processes beside a long transaction (--long-tx --php), PostgreSQL then MariaDB: about 30 minutes
	$(BUILD_BENCH)
	$(BENCH) --db pgsql --long-tx --rate 200 --jobs 120000 --php --strategies none --bare=false --work-binary "" --timeout 5m > docs/bench-long-php-pgsql.json
	$(BENCH) --db mysql --long-tx --rate 200 --jobs 120000 --php --strategies none --bare=false --work-binary "" --timeout 5m > docs/bench-long-php-mysql.json

# Jobs dispatched at a steady rate by four PHP processes of the Laravel app, drained by one worker at
# queue:work's defaults (batch, 256 in flight, in the bench process, which records every start) and by
# ten php artisan queue:work processes (whose Noop jobs note their starts); five minutes per row.
STEADY_MYSQL ?= 4000
STEADY_PGSQL ?= 2500
STEADY_PHP ?= 500
bench-steady: ## Five minutes per row at a steady rate dispatched by PHP (STEADY_MYSQL, STEADY_PGSQL, STEADY_PHP jobs/s): about 22 minutes
	$(BUILD_BENCH)
	$(BENCH) --db mysql --rate $(STEADY_MYSQL) --jobs $$(($(STEADY_MYSQL) * 300)) --php-producers 4 --workers 1 --strategies batch --concurrency 256 --bare=false --work-binary "" > docs/bench-steady-go-mysql.json
	$(BENCH) --db pgsql --rate $(STEADY_PGSQL) --jobs $$(($(STEADY_PGSQL) * 300)) --php-producers 4 --workers 1 --strategies batch --concurrency 256 --bare=false --work-binary "" > docs/bench-steady-go-pgsql.json
	$(BENCH) --db mysql,pgsql --rate $(STEADY_PHP) --jobs $$(($(STEADY_PHP) * 300)) --php-producers 4 --php --workers 1 --strategies none --bare=false --work-binary "" > docs/bench-steady-php.json

.PHONY: help test build chaos race fuzz lint bench demo bench-docs bench-long bench-long-php bench-steady
